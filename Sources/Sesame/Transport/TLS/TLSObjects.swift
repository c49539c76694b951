internal import COpenSSL

/// A client `SSL` with its BIOs, under one owner and freed once, in `deinit`: the SSL reads
/// ciphertext from one end of a BIO pair (`readBIO`), whose other end (`inboundBIO`) takes what
/// is read from the socket, and writes ciphertext to a memory BIO (`writeBIO`). The SSL owns the
/// two BIOs it was given; `inboundBIO` is owned here.
final class TLSObjects {
    let ssl: OpaquePointer
    let readBIO: OpaquePointer
    let writeBIO: OpaquePointer
    let inboundBIO: OpaquePointer

    /// A new client SSL of `context` with its BIOs; `inboundCapacity` bounds the ciphertext
    /// buffered between the socket and OpenSSL.
    init(context: TLSContext, inboundCapacity: Int) throws(SesameError) {
        OpenSSLErrorStack.clear()
        guard let ssl = SSL_new(context.pointer) else {
            throw SesameError(.tlsHandshakeFailed, "cannot create the TLS session (\(OpenSSLErrorStack.drain()))")
        }
        var readBIO: OpaquePointer?
        var inboundBIO: OpaquePointer?
        // The pair's side OpenSSL reads from has no use for a buffer of its own (nothing is
        // written to it): the smallest one.
        guard BIO_new_bio_pair(&readBIO, 1, &inboundBIO, inboundCapacity) == 1, let readBIO, let inboundBIO,
            let writeBIO = BIO_new(BIO_s_mem())
        else {
            BIO_free(readBIO)
            BIO_free(inboundBIO)
            SSL_free(ssl)
            throw SesameError(.tlsHandshakeFailed, "cannot create the TLS session (\(OpenSSLErrorStack.drain()))")
        }
        SSL_set_bio(ssl, readBIO, writeBIO)  // the SSL owns these two from here on
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        self.inboundBIO = inboundBIO
    }

    deinit {
        // No callback may reach the engine that set itself as ex_data once it lets go.
        SSL_set_ex_data(ssl, TLSCallbacks.engineIndex, nil)
        SSL_free(ssl)  // and with it readBIO and writeBIO
        BIO_free(inboundBIO)  // after the SSL, which freed the pair's other end
    }
}
