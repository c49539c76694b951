import Foundation

// Keychain Services' keys and values, with Apple's spellings and values, typed `CFString` as on
// Apple's platforms (so `as String`, `as CFString` and dictionary literals keyed by them compile
// either way).

// MARK: - Item classes

nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"

// MARK: - Attributes

nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
nonisolated(unsafe) public let kSecAttrSubject: CFString = "subj"
nonisolated(unsafe) public let kSecAttrIssuer: CFString = "issr"
nonisolated(unsafe) public let kSecAttrSerialNumber: CFString = "slnr"
nonisolated(unsafe) public let kSecAttrSubjectKeyID: CFString = "skid"
nonisolated(unsafe) public let kSecAttrPublicKeyHash: CFString = "pkhh"
nonisolated(unsafe) public let kSecAttrCertificateType: CFString = "ctyp"
nonisolated(unsafe) public let kSecAttrCertificateEncoding: CFString = "cenc"
nonisolated(unsafe) public let kSecAttrApplicationLabel: CFString = "klbl"
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
nonisolated(unsafe) public let kSecAttrEffectiveKeySize: CFString = "esiz"
nonisolated(unsafe) public let kSecAttrCanEncrypt: CFString = "encr"
nonisolated(unsafe) public let kSecAttrCanDecrypt: CFString = "decr"
nonisolated(unsafe) public let kSecAttrCanDerive: CFString = "drve"
nonisolated(unsafe) public let kSecAttrCanSign: CFString = "sign"
nonisolated(unsafe) public let kSecAttrCanVerify: CFString = "vrfy"
nonisolated(unsafe) public let kSecAttrCanWrap: CFString = "wrap"
nonisolated(unsafe) public let kSecAttrCanUnwrap: CFString = "unwp"
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"

/// Items in every state of synchronization (a query value of `kSecAttrSynchronizable`).
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"

// MARK: - kSecAttrAccessible values (kept and returned; Linux has no data-protection classes)

nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

// MARK: - kSecAttrProtocol values

nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"

// MARK: - kSecAttrAuthenticationType values

nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"

// MARK: - Values, results and matching

nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
nonisolated(unsafe) public let kSecMatchItemList: CFString = "m_SearchList"
nonisolated(unsafe) public let kSecMatchSubjectContains: CFString = "m_SubjectContains"
nonisolated(unsafe) public let kSecMatchValidOnDate: CFString = "m_ValidOnDate"

// MARK: - Options accepted and without effect on Linux

nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"

// MARK: - Status codes of Keychain Services

public let errSecIO: OSStatus = -36
public let errSecNotAvailable: OSStatus = -25291
public let errSecInteractionNotAllowed: OSStatus = -25308
public let errSecNoSuchAttr: OSStatus = -25303
public let errSecMissingEntitlement: OSStatus = -34018
