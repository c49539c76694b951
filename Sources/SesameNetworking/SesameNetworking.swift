// Apple's URL loading system under Apple's names, over Sesame: code written for Apple's
// platforms compiles and runs on Linux with `import SesameNetworking` in place of
// `import FoundationNetworking` and `import Security`.
//
// Foundation and the toolchain's FoundationNetworking are re-exported, so a file needs this one
// import. The value types are FoundationNetworking's own (`URLRequest`, `NSURLRequest`,
// `NSMutableURLRequest`, `URLResponse`, `HTTPURLResponse`, `HTTPCookie`, `URLCache`): they are
// complete and tested there, and one implementation of each behaviour is the rule. What the
// challenge model needs and corelibs lacks is declared here and shadows FoundationNetworking's
// declarations of the same name: `URLSession` and its configuration, tasks and delegates (over
// Sesame's transport and challenge resolver), `URLCredential` (identities and trusts),
// `URLProtectionSpace` (server trust, distinguished names), `URLAuthenticationChallenge` and
// its sender, `URLCredentialStorage` and `HTTPCookieStorage` (over Sesame's stores and cookie
// rules), `NSURLConnection`, and Security.
@_exported import Foundation
@_exported import FoundationNetworking
