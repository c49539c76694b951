#ifndef C_SESAME_SHIMS_H
#define C_SESAME_SHIMS_H

// Wrappers for what Swift cannot import from OpenSSL 3 and Linux headers: function-like macros,
// STACK_OF accessors, composite flag values, and <sys/epoll.h> / <sys/eventfd.h>. No policy lives
// here; every decision is made in Swift.

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pkcs12.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <stdint.h>
#include <pthread.h>
#include <zlib.h>

#pragma clang assume_nonnull begin

// MARK: - Version gates

/// The runtime OpenSSL version text, e.g. "OpenSSL 3.0.19 27 Jan 2026".
const char *CSesameShims_OpenSSL_version_text(void);
/// 1 when the headers Sesame was compiled against are OpenSSL 3.0 or newer.
int CSesameShims_OpenSSL_is_3(void);

// MARK: - Macro wrappers: SSL and SSL_CTX

int CSesameShims_SSL_set_retry_verify(SSL *ssl);
int CSesameShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
int CSesameShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
int CSesameShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
long CSesameShims_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
long CSesameShims_SSL_CTX_set_options(SSL_CTX *ctx, long options);
long CSesameShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
int CSesameShims_SSL_add1_chain_cert(SSL *ssl, X509 *cert);
int CSesameShims_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert);
int CSesameShims_SSL_get_ex_new_index(void);
int CSesameShims_X509_STORE_CTX_get_ex_new_index(void);
long CSesameShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char *_Nullable *_Nonnull resp);
long CSesameShims_SSL_set_tlsext_status_type_ocsp(SSL *ssl);
long CSesameShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *), void *_Nullable arg);
long CSesameShims_SSL_set_tlsext_status_ocsp_resp(SSL *ssl, unsigned char *resp, long length);
long CSesameShims_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *));

// MARK: - Constants that arrive as composite macros

unsigned long CSesameShims_XN_FLAG_RFC2253(void);
long CSesameShims_SSL_MODE_defaults(void);
long CSesameShims_SSL_OP_defaults(void);
int CSesameShims_SSL_SESS_CACHE_client_external(void);
int CSesameShims_SSL_SESS_CACHE_server(void);

// MARK: - STACK_OF accessors

int CSesameShims_sk_X509_num(const STACK_OF(X509) *_Nullable stack);
X509 *_Nullable CSesameShims_sk_X509_value(const STACK_OF(X509) *stack, int index);
STACK_OF(X509) *_Nullable CSesameShims_sk_X509_new_null(void);
int CSesameShims_sk_X509_push(STACK_OF(X509) *stack, X509 *cert);
void CSesameShims_sk_X509_pop_free(STACK_OF(X509) *_Nullable stack);
void CSesameShims_sk_X509_free(STACK_OF(X509) *_Nullable stack);
int CSesameShims_sk_X509_NAME_num(const STACK_OF(X509_NAME) *_Nullable stack);
X509_NAME *_Nullable CSesameShims_sk_X509_NAME_value(const STACK_OF(X509_NAME) *stack, int index);
STACK_OF(X509_NAME) *_Nullable CSesameShims_sk_X509_NAME_new_null(void);
int CSesameShims_sk_X509_NAME_push(STACK_OF(X509_NAME) *stack, X509_NAME *name);
int CSesameShims_sk_GENERAL_NAME_num(const GENERAL_NAMES *_Nullable names);
GENERAL_NAME *_Nullable CSesameShims_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index);
void CSesameShims_GENERAL_NAMES_free(GENERAL_NAMES *_Nullable names);
int CSesameShims_sk_X509_OBJECT_num(const STACK_OF(X509_OBJECT) *_Nullable stack);
X509_OBJECT *_Nullable CSesameShims_sk_X509_OBJECT_value(const STACK_OF(X509_OBJECT) *stack, int index);
/// Adds `count` certificates (up-referenced) to a store that no other thread uses yet, sorting its
/// object list once at the end: X509_STORE_add_cert searches the list for a duplicate, which
/// sorts it again after every addition (quadratic for thousands of anchors). The caller passes
/// no duplicates. Returns 1, or 0 when out of memory.
int CSesameShims_X509_STORE_add_certs(X509_STORE *store, X509 *_Nonnull const *_Nonnull certificates, int count);

// MARK: - Helpers

/// Frees memory OpenSSL allocated (OPENSSL_free is a macro).
void CSesameShims_OPENSSL_free(void *_Nullable pointer);
/// The bytes held by a memory BIO (BIO_get_mem_data is a macro).
long CSesameShims_BIO_get_mem_data(BIO *bio, char *_Nullable *_Nonnull data);
/// One GENERAL_NAME as (type, bytes): type is GEN_DNS, GEN_IPADD, GEN_EMAIL, GEN_URI or other.
int CSesameShims_GENERAL_NAME_get(const GENERAL_NAME *name, const unsigned char *_Nullable *_Nonnull data, int *length);
/// Fills a X509V3_CTX without a config database (X509V3_set_ctx_nodb is a macro).
void CSesameShims_X509V3_set_ctx(X509V3_CTX *ctx, X509 *_Nullable issuer, X509 *subject);
/// Allocates a X509V3_CTX (its size is not known to Swift).
X509V3_CTX *CSesameShims_X509V3_CTX_new(void);
void CSesameShims_X509V3_CTX_free(X509V3_CTX *ctx);
/// The iteration counts of the key derivations a PKCS#12 file asks for: its MAC's, each encrypted
/// part's (decrypted only when its own count is at most `limit`, to reach what it holds) and each
/// shrouded key's. Returns 1 with `*largest` and `*total` set when every count was read; 0 when one
/// is over `limit` (`*largest` is it; nothing past it was derived); -1 when a part cannot be read
/// here (a wrong password, an algorithm this walk does not know: PKCS12_parse then says why).
int CSesameShims_PKCS12_iterations(PKCS12 *p12, const char *password, int passwordLength, long limit,
                                   long *largest, long *total);
/// Loads the "legacy" provider (RC2, 40-bit PBEs of old PKCS#12 files) next to "default", once.
int CSesameShims_load_legacy_provider(void);

// MARK: - zlib macro wrappers

/// inflateInit2 (a macro over inflateInit2_).
int CSesameShims_inflateInit2(z_streamp stream, int windowBits);
/// deflateInit2 with the default memory level and strategy (for tests and uploads).
int CSesameShims_deflateInit2(z_streamp stream, int level, int windowBits);

// MARK: - Linux event APIs

int CSesameShims_epoll_create(void);
int CSesameShims_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// Waits; writes up to `capacity` (events, data) pairs into the two arrays.
int CSesameShims_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeoutMilliseconds);
int CSesameShims_eventfd(void);
/// pthread_setname_np(3) (glibc declares it only under _GNU_SOURCE); `name` up to 15 bytes.
int CSesameShims_name_thread(pthread_t thread, const char *name);
/// accept4(2) with SOCK_CLOEXEC (glibc declares it only under _GNU_SOURCE).
int CSesameShims_accept_cloexec(int fd);
/// posix_spawn_file_actions_addclosefrom_np(3) on a `posix_spawn_file_actions_t`: the child
/// closes every descriptor from `from` on.
int CSesameShims_spawn_close_from(void *actions, int from);
uint32_t CSesameShims_EPOLLIN(void);
uint32_t CSesameShims_EPOLLOUT(void);
uint32_t CSesameShims_EPOLLERR(void);
uint32_t CSesameShims_EPOLLHUP(void);
uint32_t CSesameShims_EPOLLRDHUP(void);

/// A certificate's name constraints, decoded once (free with NAME_CONSTRAINTS_free), or NULL:
/// `*critical` is then -1 when the extension is absent, else it is malformed.
NAME_CONSTRAINTS *_Nullable CSesameShims_name_constraints(const X509 *x509, int *critical);
/// How many permitted and excluded subtrees `constraints` has.
void CSesameShims_name_constraints_counts(const NAME_CONSTRAINTS *constraints, int *permitted, int *excluded);
/// The DNS name of excluded subtree `index` into `buffer`; its length, or -1 when not a DNS name.
int CSesameShims_name_constraints_excluded_dns(const NAME_CONSTRAINTS *constraints, int index, char *buffer, int capacity);
/// The DNS name of subtree `index` of the permitted (`permitted` 1) or excluded subtrees into
/// `buffer` (truncated to `capacity` - 1 bytes); its whole length, or -1 when not a DNS name.
int CSesameShims_name_constraints_dns(const NAME_CONSTRAINTS *constraints, int permitted, int index, char *buffer,
                                      int capacity);
/// Authority key identifier parts: -1 absent, 0 malformed, 1 present.
int CSesameShims_authority_key_id(const X509 *x509, int *has_key_id, int *has_issuer, int *has_serial);
/// Whether the authority key identifier's issuer and serial (those present) name the certificate
/// itself: 1 yes, 0 no, -1 absent or malformed.
int CSesameShims_authority_key_id_names_self(const X509 *x509);
/// Authority information access: -1 absent, 0 malformed, 1 well-formed.
int CSesameShims_information_access(const X509 *x509);

/// Policy constraints: -1 absent, 0 malformed, 1 present, with each field's skip count (-1 when
/// the field is absent, -2 when it does not fit a long).
int CSesameShims_policy_constraints(const X509 *x509, long *require_explicit, long *inhibit_mapping);
/// inhibitAnyPolicy: -1 absent, 0 malformed, 1 present with its skip count (-2: too large).
int CSesameShims_inhibit_any_policy(const X509 *x509, long *skip);

// The extensions below are returned as text, one entry a line, dotted OIDs (free with
// OPENSSL_free): NULL with `*critical` -1 when the extension is absent, NULL with `*critical` 0 or
// 1 when it is malformed; otherwise `*critical` says whether it is marked critical. At most
// `limit` entries are written; `*count` is how many there are.
/// extendedKeyUsage: one purpose OID a line.
char *_Nullable CSesameShims_extended_key_usage_text(const X509 *x509, int limit, int *count, int *critical);
/// certificatePolicies: a line per policy, its OID, then its qualifiers' OIDs after spaces.
char *_Nullable CSesameShims_certificate_policies_text(const X509 *x509, int limit, int *count, int *critical);
/// policyMappings: a line per mapping, "issuerDomainPolicy subjectDomainPolicy".
char *_Nullable CSesameShims_policy_mappings_text(const X509 *x509, int limit, int *count, int *critical);
/// CRL distribution points: -1 absent, 0 malformed, 1 present (`incomplete` counts points with
/// neither a distribution point name nor a CRL issuer).
int CSesameShims_crl_distribution_points(const X509 *x509, int *count, int *incomplete);
/// Whether the issuer (1) and the subject (2) unique identifiers are present (bits).
int CSesameShims_unique_ids(const X509 *x509);
/// The year of an ASN.1 time, or -1 when it cannot be read; `generalized` set for GeneralizedTime.
int CSesameShims_time_year(const ASN1_TIME *time, int *generalized);

/// STACK_OF(X509_CRL) accessors (macros in OpenSSL); the stack does not own its CRLs.
STACK_OF(X509_CRL) *_Nullable CSesameShims_sk_X509_CRL_new_null(void);

/// The valid policy set of a verified path (RFC 5280 §6.1.5 (g)) from OpenSSL's policy tree:
/// the user-constrained policy nodes. `index` past the end gives NULL.
const ASN1_OBJECT *_Nullable CSesameShims_policy_tree_user_policy(const X509_POLICY_TREE *_Nonnull tree, int index);
int CSesameShims_sk_X509_CRL_push(STACK_OF(X509_CRL) *stack, X509_CRL *crl);
void CSesameShims_sk_X509_CRL_free(STACK_OF(X509_CRL) *_Nullable stack);

// MARK: - libsecret and GLib layouts
// libsecret is loaded at run time (dlopen), so its headers are not needed to build Sesame; these
// are the layouts of the few structures Sesame reads or fills (libsecret 0.20, GLib 2.x ABI).

/// `SecretSchemaAttribute`: an attribute's name and type (0 string, 1 integer, 2 boolean).
typedef struct CSesameShims_SecretSchemaAttribute {
    const char *_Nullable name;
    int type;
} CSesameShims_SecretSchemaAttribute;

/// `SecretSchema`: a name, flags (2 is `SECRET_SCHEMA_DONT_MATCH_NAME`) and up to 32 attributes,
/// the list ending at the first attribute without a name.
typedef struct CSesameShims_SecretSchema {
    const char *_Nullable name;
    int flags;
    CSesameShims_SecretSchemaAttribute attributes[32];
    int reserved;
    void *_Nullable reserved1;
    void *_Nullable reserved2;
    void *_Nullable reserved3;
    void *_Nullable reserved4;
    void *_Nullable reserved5;
    void *_Nullable reserved6;
    void *_Nullable reserved7;
} CSesameShims_SecretSchema;

/// `GError`.
typedef struct CSesameShims_GError {
    uint32_t domain;
    int code;
    char *_Nullable message;
} CSesameShims_GError;

/// `GList`.
typedef struct CSesameShims_GList {
    void *_Nullable data;
    struct CSesameShims_GList *_Nullable next;
    struct CSesameShims_GList *_Nullable prev;
} CSesameShims_GList;

// MARK: - GSSAPI layouts
// GSSAPI (MIT Kerberos's libgssapi_krb5) is loaded at run time (dlopen), so its headers are not
// needed to build Sesame; these are the layouts of the structures Sesame passes (RFC 2744's C
// bindings as MIT lays them out on Linux).

/// `gss_buffer_desc`.
typedef struct CSesameShims_gss_buffer_desc {
    size_t length;
    void *_Nullable value;
} CSesameShims_gss_buffer_desc;

/// `gss_OID_desc`.
typedef struct CSesameShims_gss_OID_desc {
    uint32_t length;
    void *_Nullable elements;
} CSesameShims_gss_OID_desc;

/// `gss_OID_set_desc`.
typedef struct CSesameShims_gss_OID_set_desc {
    size_t count;
    CSesameShims_gss_OID_desc *_Nullable elements;
} CSesameShims_gss_OID_set_desc;

/// `struct gss_channel_bindings_struct`.
typedef struct CSesameShims_gss_channel_bindings {
    uint32_t initiator_addrtype;
    CSesameShims_gss_buffer_desc initiator_address;
    uint32_t acceptor_addrtype;
    CSesameShims_gss_buffer_desc acceptor_address;
    CSesameShims_gss_buffer_desc application_data;
} CSesameShims_gss_channel_bindings;

#pragma clang assume_nonnull end

#endif
