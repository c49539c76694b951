import Foundation

// Keychain Services' keys and values, with Apple's spellings and values, typed `CFString` as on
// Apple's platforms (so `as String`, `as CFString` and dictionary literals keyed by them compile
// either way).

// MARK: - Item classes

/// The item class key of a query or an item (`kSecClassGenericPassword`, ...).
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// A generic password: a secret found by service and account.
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// An internet password: a password for a server, port, protocol and account, shared with
/// `URLCredentialStorage`.
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"
/// A certificate.
nonisolated(unsafe) public let kSecClassCertificate: CFString = "cert"
/// A cryptographic key.
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
/// An identity: a certificate with its private key.
nonisolated(unsafe) public let kSecClassIdentity: CFString = "idnt"

// MARK: - Attributes

/// When the item may be read. Stored, returned and matched; not enforced on Linux, where an item is
/// readable by the user's processes whenever the keyring is unlocked.
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
/// Access control (user presence, biometry). Accepted without effect on Linux: no prompt is shown.
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
/// The access group that shares the item. Stored, returned and matched; not enforced on Linux
/// (there are no entitlements).
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
/// Whether the item syncs through iCloud Keychain. Stored and matched (searches skip synchronizable
/// items unless asked); nothing leaves the machine.
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// When the item was created (read only).
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
/// When the item was last changed (read only).
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
/// A description of the item's kind, shown to people.
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
/// A comment about the item.
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
/// The item's creator code, a number.
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
/// The item's type code, a number.
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
/// The item's label, shown by keyring managers such as Seahorse.
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// Whether the item is hidden from keychain browsers. Stored and matched.
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is a placeholder for a password the user declined to store. Stored and matched.
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
/// The account (user) name of a password.
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// The service a generic password is for.
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// Data of the caller's own kept with a generic password.
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
/// The security domain (realm) of an internet password.
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
/// The server (host) of an internet password; required to add one.
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
/// The protocol of an internet password (`kSecAttrProtocolHTTPS`, ...).
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
/// The authentication scheme of an internet password (`kSecAttrAuthenticationTypeHTTPBasic`, ...).
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
/// The port of an internet password; required where the protocol has no default port.
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
/// The path of an internet password. Stored and returned, but not part of the item's identity (the
/// protection space is, as `URLCredentialStorage` keys it).
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
/// A certificate's subject name, DER-encoded (read only).
nonisolated(unsafe) public let kSecAttrSubject: CFString = "subj"
/// A certificate's issuer name, DER-encoded (read only).
nonisolated(unsafe) public let kSecAttrIssuer: CFString = "issr"
/// A certificate's serial number, DER-encoded (read only).
nonisolated(unsafe) public let kSecAttrSerialNumber: CFString = "slnr"
/// A certificate's subject key identifier (read only).
nonisolated(unsafe) public let kSecAttrSubjectKeyID: CFString = "skid"
/// The SHA-1 hash of a certificate's public key (read only); matches the key's
/// `kSecAttrApplicationLabel`.
nonisolated(unsafe) public let kSecAttrPublicKeyHash: CFString = "pkhh"
/// A certificate's type (X.509 version 3; read only).
nonisolated(unsafe) public let kSecAttrCertificateType: CFString = "ctyp"
/// A certificate's encoding (DER; read only).
nonisolated(unsafe) public let kSecAttrCertificateEncoding: CFString = "cenc"
/// A key's label for programs: by default the SHA-1 hash of its public key.
nonisolated(unsafe) public let kSecAttrApplicationLabel: CFString = "klbl"
/// A key's tag, data of the caller's choosing to find it by.
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
/// Whether a key made by a `SecKey` function is stored as a keychain item.
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
/// A key's effective size in bits.
nonisolated(unsafe) public let kSecAttrEffectiveKeySize: CFString = "esiz"
/// Whether a key may encrypt.
nonisolated(unsafe) public let kSecAttrCanEncrypt: CFString = "encr"
/// Whether a key may decrypt.
nonisolated(unsafe) public let kSecAttrCanDecrypt: CFString = "decr"
/// Whether a key may derive other keys.
nonisolated(unsafe) public let kSecAttrCanDerive: CFString = "drve"
/// Whether a key may sign.
nonisolated(unsafe) public let kSecAttrCanSign: CFString = "sign"
/// Whether a key may verify signatures.
nonisolated(unsafe) public let kSecAttrCanVerify: CFString = "vrfy"
/// Whether a key may wrap other keys.
nonisolated(unsafe) public let kSecAttrCanWrap: CFString = "wrap"
/// Whether a key may unwrap other keys.
nonisolated(unsafe) public let kSecAttrCanUnwrap: CFString = "unwp"
/// The token (such as the Secure Enclave) that holds a key. Stored and matched; Linux has no Secure
/// Enclave.
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"

/// Items in every state of synchronization (a query value of `kSecAttrSynchronizable`).
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"

// MARK: - kSecAttrAccessible values (kept and returned; Linux has no data-protection classes)

/// Readable while the device is unlocked (Apple's default). Kept and returned; not enforced on
/// Linux.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// Readable after the first unlock since start-up. Kept and returned; not enforced on Linux.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// Always readable (deprecated by Apple). Kept and returned; not enforced on Linux.
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
/// Readable while unlocked, only with a passcode set, never migrated. Kept and returned; not
/// enforced on Linux.
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// Readable while unlocked, never migrated. Kept and returned; not enforced on Linux.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// Readable after the first unlock, never migrated. Kept and returned; not enforced on Linux.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// Always readable, never migrated (deprecated by Apple). Kept and returned; not enforced on Linux.
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

// MARK: - kSecAttrProtocol values

/// FTP.
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
/// An FTP account.
nonisolated(unsafe) public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
/// HTTP.
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
/// IRC.
nonisolated(unsafe) public let kSecAttrProtocolIRC: CFString = "irc "
/// NNTP.
nonisolated(unsafe) public let kSecAttrProtocolNNTP: CFString = "nntp"
/// POP3.
nonisolated(unsafe) public let kSecAttrProtocolPOP3: CFString = "pop3"
/// SMTP.
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
/// SOCKS.
nonisolated(unsafe) public let kSecAttrProtocolSOCKS: CFString = "sox "
/// IMAP.
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
/// LDAP.
nonisolated(unsafe) public let kSecAttrProtocolLDAP: CFString = "ldap"
/// AppleTalk.
nonisolated(unsafe) public let kSecAttrProtocolAppleTalk: CFString = "atlk"
/// AFP.
nonisolated(unsafe) public let kSecAttrProtocolAFP: CFString = "afp "
/// Telnet.
nonisolated(unsafe) public let kSecAttrProtocolTelnet: CFString = "teln"
/// SSH.
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
/// FTP over TLS.
nonisolated(unsafe) public let kSecAttrProtocolFTPS: CFString = "ftps"
/// HTTPS.
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
/// An HTTP proxy.
nonisolated(unsafe) public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
/// An HTTPS proxy.
nonisolated(unsafe) public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
/// An FTP proxy.
nonisolated(unsafe) public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
/// SMB.
nonisolated(unsafe) public let kSecAttrProtocolSMB: CFString = "smb "
/// RTSP.
nonisolated(unsafe) public let kSecAttrProtocolRTSP: CFString = "rtsp"
/// An RTSP proxy.
nonisolated(unsafe) public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
/// DAAP.
nonisolated(unsafe) public let kSecAttrProtocolDAAP: CFString = "daap"
/// Remote Apple Events (EPPC).
nonisolated(unsafe) public let kSecAttrProtocolEPPC: CFString = "eppc"
/// IPP.
nonisolated(unsafe) public let kSecAttrProtocolIPP: CFString = "ipp "
/// NNTP over TLS.
nonisolated(unsafe) public let kSecAttrProtocolNNTPS: CFString = "ntps"
/// LDAP over TLS.
nonisolated(unsafe) public let kSecAttrProtocolLDAPS: CFString = "ldps"
/// Telnet over TLS.
nonisolated(unsafe) public let kSecAttrProtocolTelnetS: CFString = "tels"
/// IMAP over TLS.
nonisolated(unsafe) public let kSecAttrProtocolIMAPS: CFString = "imps"
/// IRC over TLS.
nonisolated(unsafe) public let kSecAttrProtocolIRCS: CFString = "ircs"
/// POP3 over TLS.
nonisolated(unsafe) public let kSecAttrProtocolPOP3S: CFString = "pops"

// MARK: - kSecAttrAuthenticationType values

/// NTLM.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
/// MSN.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
/// Distributed Password Authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
/// Remote Password Authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
/// HTTP Basic.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// HTTP Digest.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
/// An HTML form.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// The default scheme.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"

// MARK: - Values, results and matching

/// An item's secret: a password's bytes (UTF-8 text for an internet password), a key's or a
/// certificate's data.
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// An item as an object: a `SecCertificate`, `SecKey` or `SecIdentity`.
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// A reference to an item that stays valid across launches, as `kSecReturnPersistentRef` gives it.
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// Return each item's secret.
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Return each item's attributes.
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// Return each item as an object (certificates, keys, identities; not for passwords, which have no
/// object on Linux).
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// Return a reference to each item that stays valid across launches.
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// How many items a search returns: `kSecMatchLimitOne` (the default) or `kSecMatchLimitAll`.
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// Return one item.
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Return every matching item.
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
/// Compare string attributes without case.
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
/// Search only among these items.
nonisolated(unsafe) public let kSecMatchItemList: CFString = "m_SearchList"
/// Match certificates and identities whose subject contains this text.
nonisolated(unsafe) public let kSecMatchSubjectContains: CFString = "m_SubjectContains"
/// Match certificates and identities valid on this date (`NSNull`: now).
nonisolated(unsafe) public let kSecMatchValidOnDate: CFString = "m_ValidOnDate"

// MARK: - Options accepted and without effect on Linux

/// Use the data-protection keychain (macOS). Accepted without effect: Linux has one store.
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
/// Whether the call may prompt the user. Accepted without effect: no prompt is shown on Linux.
nonisolated(unsafe) public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
/// Prompt when needed. Accepted without effect on Linux.
nonisolated(unsafe) public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
/// Fail instead of prompting. Accepted without effect on Linux.
nonisolated(unsafe) public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
/// Skip items that need a prompt. Accepted without effect on Linux.
nonisolated(unsafe) public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
/// The text of the prompt. Accepted without effect: no prompt is shown on Linux.
nonisolated(unsafe) public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// A LocalAuthentication context to authenticate with. Accepted without effect on Linux.
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"

// MARK: - Status codes of Keychain Services

/// An input or output error (the credential store could not be read or written).
public let errSecIO: OSStatus = -36
/// No keychain is available (no Secret Service and no usable credential file).
public let errSecNotAvailable: OSStatus = -25291
/// The item cannot be changed or read without interaction: a locked keyring, or another program's
/// password.
public let errSecInteractionNotAllowed: OSStatus = -25308
/// The attribute does not exist for this item class.
public let errSecNoSuchAttr: OSStatus = -25303
/// The program lacks an entitlement (Apple's platforms only; never returned on Linux).
public let errSecMissingEntitlement: OSStatus = -34018
