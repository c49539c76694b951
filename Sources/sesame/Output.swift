import FoundationEssentials
import Glibc

/// Writing to the terminal.
enum Output {
    /// A line on standard error, prefixed with "sesame: ".
    static func error(_ message: String) {
        standardError("sesame: \(message)\n")
    }

    /// `text` on standard error as it is; a write the terminal refuses is dropped, as it would be
    /// by curl.
    static func standardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            bytes = bytes.dropFirst(count)
        }
    }
}

/// `sesame --help`.
enum Usage {
    static let text = """
        usage: sesame [fetch] URL [options]      one HTTP(S) request, curl's option names
               sesame credentials list | add | remove | default | migrate [URL -u USER[:PASS] --realm R]
               sesame trust https://HOST[:PORT]/ [--cacert F] [--json]
               sesame trust evaluate --leaf F [--intermediates F] --anchors F [--host H | --ip A]
                                     [--at RFC3339] [--max-depth N] [--crl F] [--ocsp F]
                                     [--policy OID] [--explicit-policy] [--json] [-v]
               sesame demo [--step NAME] [--list]
               sesame --version | --help

        fetch options:
          -X, --request METHOD       the method (default GET, or POST with -d)
          -H, --header "Name: v"     add a header field (repeatable)
          -d, --data DATA|@FILE      send DATA (from FILE without CR/LF) as a form body; repeats join with &
              --data-binary DATA|@FILE   send exactly DATA or FILE's bytes
              --data-raw DATA        send DATA, no @ meaning
              --data-urlencode D     percent-encode D ('content', 'name=content', '@file',
                                     'name@file') in the --charset encoding; joins -d with &
              --charset NAME         the encoding --data-urlencode writes (GB18030, GBK, Big5,
                                     Shift_JIS, EUC-KR, ISO-8859-1, ...); named in Content-Type
          -F, --form NAME=CONTENT    a multipart/form-data field: text, '<file' (text from a
                                     file) or '@file[;type=MIME][;filename=NAME]' (streamed)
              --json DATA|@FILE      send DATA as application/json (and Accept it)
              --decode-charset NAME  print the body converted from NAME to UTF-8 ('auto': the
                                     Content-Type's charset); invalid bytes are an error
          -b, --cookie DATA|FILE     send 'name=value; ...' or cookies from a Netscape cookie
                                     file, and turn cookies on (off without -b or -c)
          -c, --cookie-jar FILE      write every cookie to FILE (Netscape format) at the end
          -o, --output FILE          write the body to FILE, opened as curl does (created or
                                     truncated at the first byte, written through a link or to a
                                     device such as /dev/null; '-' is stdout)
              --atomic               with -o: write beside FILE and rename over it only when the
                                     transfer succeeded (a regular or new FILE only)
              --remove-on-error      with -o: remove a partly written FILE when the transfer fails
          -i, --include              print the response head before the body
          -v, --verbose              '*' lines on stderr for connection, TLS (version, cipher, peer
                                     certificate, trust result), '>' request and '<' response heads
                                     (and the trailers after a body)
          -s, --silent               no progress bar and no error messages (see -S)
          -S, --show-error           print error messages even with -s
          -L, --location             follow redirects (credentials never go to another origin)
              --max-redirs N         at most N redirects with -L (default 50; -1 unlimited)
              --http2                HTTP/2 where TLS negotiates it (ALPN h2), else HTTP/1.1 (default)
              --http1.1              HTTP/1.1 only
              --http2-prior-knowledge  HTTP/2 from the first byte on http:// URLs too (h2c)
              --connect-timeout S    seconds allowed for making each connection (resolving,
                                     TCP and the TLS handshake)
              --expect100-timeout S  seconds a body sent with 'Expect: 100-continue' waits for
                                     the server's 100 before it goes anyway (default 1)
          -m, --max-time S           seconds allowed for the whole transfer, connecting included
              --cacert FILE          trust only the CA certificates in FILE (PEM or DER)
              --capath DIR           trust only the CA certificates in DIR
              --anchors FILE         trust the CA certificates in FILE as well as the system's
                                     (repeatable; SecTrustSetAnchorCertificatesOnly(false))
              --anchors-only         trust only the --anchors / --cacert / --capath certificates
              --cert-status          require a verified, current OCSP response stapled by the
                                     server (a stapled "revoked" always fails, flag or not)
          -k, --insecure             do NOT check the server's certificate nor its OCSP staple
                                     (prints a warning)
              --pin-cert FILE        pin the certificates in FILE (repeatable): the validated chain
                                     must contain one of their public keys (or, with
                                     --pinning-mode certificate, chain up to one of them)
              --pinning-mode MODE    none, certificate or publickey (default with --pin-cert)
              --pinnedpubkey PINS    sha256//BASE64[;sha256//...]: a public key of the validated
                                     chain must have one of these SPKI hashes (curl's syntax)
              --crl FILE             check every certificate below the anchor against the CRLs
                                     in FILE (DER, or any number in PEM; repeatable; delta
                                     CRLs too; nothing is fetched)
              --policy OID           a certificate policy the chain may be valid for (repeatable;
                                     default any); with --explicit-policy it must be
              --explicit-policy      the chain must be valid for a --policy (RFC 5280 §6.1.1)
              --inhibit-policy-mapping, --inhibit-any-policy
                                     RFC 5280's other two policy inputs
              --no-validate-domain   do not check the certificate's names against the host
          -E, --cert FILE[:PASS]     send this client certificate when a server asks (PEM with its
                                     key, or PKCS#12; a backslash before ':' keeps it in FILE);
                                     exit code 5 when a server requires or rejects it
              --cert-type P12|PEM    the -E file's format (default: P12 for .p12/.pfx, else PEM)
              --key FILE             the private key for a PEM -E certificate (default: the -E file)
              --pass PHRASE          the password of the key or PKCS#12 file
          -x, --proxy URL            use this proxy ([http|https]://[user:pass@]host[:port], port
                                     1080 by default); https:// URLs go through CONNECT; '' turns
                                     off the proxies of http_proxy, https_proxy, all_proxy
          -U, --proxy-user U[:P]     answer the proxy's 407 as U (asks for P on the terminal); a
                                     407 after the credential was tried is exit code 7
              --proxy-basic          answer only Basic proxy challenges
              --proxy-digest         answer only Digest proxy challenges
              --proxy-negotiate      answer only Negotiate (Kerberos) proxy challenges (-U : for
                                     the ticket cache)
              --proxy-ntlm           answer only NTLM proxy challenges
              --proxy-anyauth        answer the strongest proxy scheme offered, Negotiate and
                                     NTLM included (default: Digest > Basic)
              --noproxy LIST         hosts reached without the proxy (curl's no_proxy syntax)
          -f, --fail                 no body and exit code 8 when the status is 400 or above
          -u, --user USER[:PASS]     answer authentication challenges as USER (asks for the password
                                     on the terminal when PASS is left out); a 401 after the
                                     credential was tried is exit code 6
              --basic                send -u as HTTP Basic at once, without waiting for a challenge
              --digest               answer only HTTP Digest challenges
              --negotiate            answer only Negotiate (Kerberos) challenges: with -u : the
                                     ticket cache (KRB5CCNAME), with -u USER:PASS a ticket from
                                     that password; the server's final token must verify
              --delegation LEVEL     forward the Kerberos ticket: none (default), policy (when
                                     the realm marks the server ok-as-delegate) or always
              --ntlm                 answer only NTLM challenges (NTLMv2; -u 'DOMAIN\\USER:PASS');
                                     over plain http only for the host of the URL
              --spnego-ntlm          let Negotiate fall back to NTLM through an installed GSSAPI
                                     NTLM mechanism (gss-ntlmssp) when Kerberos cannot answer
              --oauth2-bearer TOKEN  send TOKEN as a Bearer token to the URL's origin (no other)
              --oauth2-refresh CMD   when the origin refuses the token (401, invalid_token), run
                                     CMD with /bin/sh, the refused token in
                                     SESAME_REJECTED_TOKEN, and send the request once more with
                                     the first line it prints (-v shows the refresh)
              --anyauth              answer the strongest scheme the server offers: Negotiate >
                                     NTLM > Digest SHA-512-256 > SHA-256 > MD5 > Basic (by
                                     default Digest and Basic only)
          -n, --netrc                answer challenges from ~/.netrc (or $NETRC)
              --netrc-file FILE      answer challenges from FILE
              --credential-store S   the permanent credential store: secret-service (the
                                     desktop keyring), file ($XDG_DATA_HOME/sesame/
                                     credentials.json) or a file's PATH; by default the keyring
                                     where one answers, else the file. Stored credentials
                                     answer challenges without -u
              --save-credentials     keep -u in the store once the server accepted it
        Basic credentials go over plain http only when typed with -u for an http URL (a warning is
        printed); stored and .netrc credentials are only ever sent over https. With -u the store is
        not read (nor the keyring opened) unless --save-credentials or --credential-store is given.
        A progress bar is drawn on stderr for -o downloads when stderr is a terminal.

        credentials (the permanent stores; passwords are never printed):
          list                       every stored credential in the keyring and the file:
                                     server, realm, scheme, user, default, and whether another
                                     program saved it (network-password schema)
          add URL -u USER[:PASS] [--realm R] [--method basic|digest|any] [--default]
          remove URL -u USER [--realm R] [--method M]
          default URL -u USER [--realm R] [--method M]
          migrate [--to secret-service|file]
                                     move the file's entries into the keyring (or back); the
                                     source is cleared only once every copy reads back the same
          (each takes --credential-store secret-service|file|PATH; without --realm the credential
          serves every realm)

        trust:
          explains a server's chain: each certificate (subject, issuer, validity, SANs, SPKI pin),
          the evaluation with every reason, and the validated chain's pins ready to paste;
          'evaluate' does the same offline. Exit 0 when trusted, 4 when not.

        demo:
          a tour of Sesame against servers started in this process on loopback with a fresh
          test PKI; exit 0 only when every step behaved as described

        exit codes:
          0 ok                      5 client certificate
          1 other failure           6 authentication
          2 usage                   7 proxy authentication
          3 network or timeout      8 HTTP status >= 400 with --fail
          4 server trust            9 protocol error
        """
}

/// A failure of the command itself (not of the library), with its message.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
