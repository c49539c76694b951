import Sesame

/// What the manager keeps for one task (AFNetworking's `AFURLSessionManagerTaskDelegate`): the
/// body received, the progress objects and their blocks, the completion handler, a download's
/// destination, and the error a refused server trust leaves.
final class AFURLSessionTaskState: @unchecked Sendable {
    // @unchecked: touched on the manager's operation queue (one at a time), and by the caller
    // before the task is resumed.
    var data = Data()
    let uploadProgress = Progress(totalUnitCount: 0)
    let downloadProgress = Progress(totalUnitCount: 0)
    var uploadProgressBlock: ((Progress) -> Void)?
    var downloadProgressBlock: ((Progress) -> Void)?
    var completionHandler: ((URLResponse, Any?, (any Error)?) -> Void)?
    var downloadCompletionHandler: ((URLResponse, URL?, (any Error)?) -> Void)?
    var destination: ((URL, URLResponse) -> URL)?
    var downloadFileURL: URL?
    /// Replaces the task's error (a cancellation) when the challenge was refused: the security
    /// policy's -1202, or an error an authentication challenge handler returned.
    var challengeError: NSError?
    /// A download's file that could not be moved to its destination.
    var moveError: NSError?

    init() {
        uploadProgress.totalUnitCount = -1
        downloadProgress.totalUnitCount = -1
    }

    func sent(total: Int64, expected: Int64) {
        uploadProgress.totalUnitCount = expected
        uploadProgress.completedUnitCount = total
        uploadProgressBlock?(uploadProgress)
    }

    func received(total: Int64, expected: Int64) {
        downloadProgress.totalUnitCount = expected
        downloadProgress.completedUnitCount = total
        downloadProgressBlock?(downloadProgress)
    }
}

extension NSError {
    /// AFNetworking 4's error for a server the security policy refused (in place of the
    /// cancellation): `NSURLErrorServerCertificateUntrusted`, with the trust and the URL, and
    /// Sesame's reasons as the failure reason.
    static func serverTrustRefused(_ trust: SecTrust?, url: URL?, reasons: String) -> NSError {
        let host = url?.host ?? "this server"
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey:
                "The certificate for this server is invalid. You might be connecting to a server that is pretending to be “\(host)” which could put your confidential information at risk.",
            NSLocalizedFailureReasonErrorKey: reasons,
        ]
        if let url {
            userInfo[NSURLErrorFailingURLErrorKey] = url
        }
        if let trust { userInfo[NSURLErrorFailingURLPeerTrustErrorKey] = trust }
        return NSError(domain: NSURLErrorDomain, code: NSURLErrorServerCertificateUntrusted, userInfo: userInfo)
    }
}
