// Apple's URL loading system under Apple's names, over Sesame: code written for Apple's
// platforms compiles and runs on Linux with `import SesameNetworking` in place of
// `import FoundationNetworking` and `import Security`.
//
// Foundation is re-exported, so a file needs this one import. Declarations here shadow the
// unavailable placeholders Foundation keeps for FoundationNetworking's types on Linux.
@_exported import Foundation
