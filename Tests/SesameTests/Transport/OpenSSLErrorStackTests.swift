internal import COpenSSL
import Testing

@testable import Sesame

/// The thread's OpenSSL error queue: emptied before a call whose failure is inspected, so that an
/// earlier, unrelated failure on the same thread is never reported as this call's.
@Suite struct OpenSSLErrorStackTests {
    @Test func clearingEmptiesAQueueLeftByAnEarlierFailure() {
        OpenSSLErrorStack.clear()
        #expect(BIO_new_file("/nonexistent/sesame-test", "r") == nil)
        #expect(ERR_peek_error() != 0)
        OpenSSLErrorStack.clear()
        #expect(ERR_peek_error() == 0)
        #expect(OpenSSLErrorStack.drain().entries.isEmpty)
    }

    @Test func drainingReturnsTheFailuresAndEmptiesTheQueue() {
        OpenSSLErrorStack.clear()
        #expect(BIO_new_file("/nonexistent/sesame-test", "r") == nil)
        let stack = OpenSSLErrorStack.drain()
        #expect(!stack.entries.isEmpty)
        #expect(stack.description.contains("No such file") || stack.description.contains("no such file"))
        #expect(ERR_peek_error() == 0)
        OpenSSLErrorStack.clear()  // on an empty queue: nothing to do, nothing breaks
        #expect(ERR_peek_error() == 0)
    }
}
