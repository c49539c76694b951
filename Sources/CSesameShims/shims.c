#define _GNU_SOURCE
#include <limits.h>
#include "CSesameShims.h"

#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <openssl/provider.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/x509v3.h>

// MARK: - Version gates

const char *CSesameShims_OpenSSL_version_text(void) { return OpenSSL_version(OPENSSL_VERSION); }

int CSesameShims_OpenSSL_is_3(void) {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    return 1;
#else
    return 0;
#endif
}

// MARK: - Process exit

// OpenSSL 3 registers OPENSSL_cleanup with atexit(3) when it first initialises. Sesame's event
// loop threads go on running while exit() runs such handlers: a loop thread freeing an SSL then
// takes a lock the cleanup has just freed (seen as a crash of the command-line tool under
// ThreadSanitizer, exiting on a refused certificate). Initialising before anything else, without
// that handler, leaves the library's state in place at exit; the kernel reclaims it.
__attribute__((constructor)) static void CSesameShims_openssl_without_atexit(void) {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

// MARK: - Macro wrappers

int CSesameShims_SSL_set_retry_verify(SSL *ssl) { return SSL_set_retry_verify(ssl); }
int CSesameShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
int CSesameShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
int CSesameShims_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
long CSesameShims_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long CSesameShims_SSL_CTX_set_options(SSL_CTX *ctx, long options) { return (long)SSL_CTX_set_options(ctx, options); }
long CSesameShims_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
int CSesameShims_SSL_add1_chain_cert(SSL *ssl, X509 *cert) { return (int)SSL_add1_chain_cert(ssl, cert); }
int CSesameShims_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert) { return (int)SSL_CTX_add1_chain_cert(ctx, cert); }
int CSesameShims_SSL_get_ex_new_index(void) { return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL); }
int CSesameShims_X509_STORE_CTX_get_ex_new_index(void) {
    return X509_STORE_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}
long CSesameShims_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **resp) {
    return SSL_get_tlsext_status_ocsp_resp(ssl, resp);
}
long CSesameShims_SSL_set_tlsext_status_type_ocsp(SSL *ssl) {
    return SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp);
}
long CSesameShims_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *), void *arg) {
    SSL_CTX_set_tlsext_status_arg(ctx, arg);
    return SSL_CTX_set_tlsext_status_cb(ctx, cb);
}
long CSesameShims_SSL_set_tlsext_status_ocsp_resp(SSL *ssl, unsigned char *resp, long length) {
    return SSL_set_tlsext_status_ocsp_resp(ssl, resp, length);
}
long CSesameShims_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *)) {
    return SSL_CTX_set_tlsext_servername_callback(ctx, cb);
}

// MARK: - Constants

unsigned long CSesameShims_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }
long CSesameShims_SSL_MODE_defaults(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS;
}
long CSesameShims_SSL_OP_defaults(void) {
    return (long)(SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
}
int CSesameShims_SSL_SESS_CACHE_client_external(void) {
    return SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE;
}
int CSesameShims_SSL_SESS_CACHE_server(void) { return SSL_SESS_CACHE_SERVER; }

// MARK: - STACK_OF accessors

int CSesameShims_sk_X509_num(const STACK_OF(X509) *stack) { return stack == NULL ? 0 : sk_X509_num(stack); }
X509 *CSesameShims_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
STACK_OF(X509) *CSesameShims_sk_X509_new_null(void) { return sk_X509_new_null(); }
int CSesameShims_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
void CSesameShims_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
void CSesameShims_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
int CSesameShims_sk_X509_NAME_num(const STACK_OF(X509_NAME) *stack) {
    return stack == NULL ? 0 : sk_X509_NAME_num(stack);
}
X509_NAME *CSesameShims_sk_X509_NAME_value(const STACK_OF(X509_NAME) *stack, int index) {
    return sk_X509_NAME_value(stack, index);
}
STACK_OF(X509_NAME) *CSesameShims_sk_X509_NAME_new_null(void) { return sk_X509_NAME_new_null(); }
int CSesameShims_sk_X509_NAME_push(STACK_OF(X509_NAME) *stack, X509_NAME *name) {
    return sk_X509_NAME_push(stack, name);
}
int CSesameShims_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) {
    return names == NULL ? 0 : sk_GENERAL_NAME_num(names);
}
GENERAL_NAME *CSesameShims_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) {
    return sk_GENERAL_NAME_value(names, index);
}
void CSesameShims_GENERAL_NAMES_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
int CSesameShims_sk_X509_OBJECT_num(const STACK_OF(X509_OBJECT) *stack) {
    return stack == NULL ? 0 : sk_X509_OBJECT_num(stack);
}
X509_OBJECT *CSesameShims_sk_X509_OBJECT_value(const STACK_OF(X509_OBJECT) *stack, int index) {
    return sk_X509_OBJECT_value(stack, index);
}
int CSesameShims_X509_STORE_add_certs(X509_STORE *store, X509 *const *certificates, int count) {
    STACK_OF(X509_OBJECT) *objects = X509_STORE_get0_objects(store);
    if (objects == NULL) return 0;
    for (int index = 0; index < count; index++) {
        X509_OBJECT *object = X509_OBJECT_new();
        if (object == NULL) return 0;
        if (X509_OBJECT_set1_X509(object, certificates[index]) != 1 || sk_X509_OBJECT_push(objects, object) <= 0) {
            X509_OBJECT_free(object);
            return 0;
        }
    }
    sk_X509_OBJECT_sort(objects);
    return 1;
}

/// The iteration count of a password-based encryption algorithm: PBES2 with PBKDF2, or a PKCS#5 v1
/// or PKCS#12 PBE; -1 for one that has none this walk knows (scrypt's cost is bounded by OpenSSL).
static long pbe_iterations(const X509_ALGOR *algorithm) {
    const ASN1_OBJECT *oid = NULL;
    int type = 0;
    const void *value = NULL;
    X509_ALGOR_get0(&oid, &type, &value, algorithm);
    if (type != V_ASN1_SEQUENCE || value == NULL) return -1;
    ASN1_TYPE *parameter = ASN1_TYPE_new();
    if (parameter == NULL) return -1;
    if (ASN1_TYPE_set1(parameter, type, value) != 1) {
        ASN1_TYPE_free(parameter);
        return -1;
    }
    long iterations = -1;
    if (OBJ_obj2nid(oid) == NID_pbes2) {
        PBE2PARAM *pbe2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM), parameter);
        if (pbe2 != NULL && pbe2->keyfunc != NULL && OBJ_obj2nid(pbe2->keyfunc->algorithm) == NID_id_pbkdf2
            && pbe2->keyfunc->parameter != NULL) {
            PBKDF2PARAM *kdf = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM), pbe2->keyfunc->parameter);
            if (kdf != NULL) iterations = ASN1_INTEGER_get(kdf->iter);
            PBKDF2PARAM_free(kdf);
        }
        PBE2PARAM_free(pbe2);
    } else {
        PBEPARAM *pbe = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM), parameter);
        if (pbe != NULL) iterations = ASN1_INTEGER_get(pbe->iter);
        PBEPARAM_free(pbe);
    }
    ASN1_TYPE_free(parameter);
    return iterations;
}

/// Adds `iterations` to the walk's figures; 0 when over `limit`.
static int count_iterations(long iterations, long limit, long *largest, long *total) {
    if (iterations > *largest) *largest = iterations;
    if (iterations > limit) return 0;
    if (iterations > 0) *total += iterations;
    return 1;
}

static int bag_iterations(const STACK_OF(PKCS12_SAFEBAG) *bags, long limit, long *largest, long *total, int depth) {
    if (depth > 4) return -1;
    for (int index = 0; index < sk_PKCS12_SAFEBAG_num(bags); index++) {
        const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, index);
        int nid = PKCS12_SAFEBAG_get_nid(bag);
        if (nid == NID_pkcs8ShroudedKeyBag) {
            const X509_ALGOR *algorithm = NULL;
            X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &algorithm, NULL);
            if (algorithm == NULL) return -1;
            if (!count_iterations(pbe_iterations(algorithm), limit, largest, total)) return 0;
        } else if (nid == NID_safeContentsBag) {
            int result = bag_iterations(PKCS12_SAFEBAG_get0_safes(bag), limit, largest, total, depth + 1);
            if (result != 1) return result;
        }
    }
    return 1;
}

int CSesameShims_PKCS12_iterations(PKCS12 *p12, const char *password, int passwordLength, long limit,
                                   long *largest, long *total) {
    *largest = 0;
    *total = 0;
    if (PKCS12_mac_present(p12)) {
        const ASN1_INTEGER *macIterations = NULL;
        PKCS12_get0_mac(NULL, NULL, NULL, &macIterations, p12);
        // An absent count means 1 (RFC 7292 MacData).
        long iterations = macIterations == NULL ? 1 : ASN1_INTEGER_get(macIterations);
        if (iterations < 0) return -1;
        if (!count_iterations(iterations, limit, largest, total)) return 0;
    }
    STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
    if (safes == NULL) return -1;
    int result = 1;
    int unread = 0;
    for (int index = 0; index < sk_PKCS7_num(safes) && result == 1; index++) {
        PKCS7 *safe = sk_PKCS7_value(safes, index);
        STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
        int nid = OBJ_obj2nid(safe->type);
        if (nid == NID_pkcs7_data) {
            bags = PKCS12_unpack_p7data(safe);
        } else if (nid == NID_pkcs7_encrypted) {
            if (safe->d.encrypted == NULL || safe->d.encrypted->enc_data == NULL) {
                result = -1;
                break;
            }
            if (!count_iterations(pbe_iterations(safe->d.encrypted->enc_data->algorithm), limit, largest, total)) {
                result = 0;
                break;
            }
            bags = PKCS12_unpack_p7encdata(safe, password, passwordLength);
        } else {
            continue;
        }
        if (bags == NULL) {
            // A part this walk cannot open (a wrong password, a legacy cipher not loaded yet):
            // the parts after it are still counted.
            unread = 1;
            continue;
        }
        result = bag_iterations(bags, limit, largest, total, 0);
        sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
        if (result == -1) {
            unread = 1;
            result = 1;
        }
    }
    sk_PKCS7_pop_free(safes, PKCS7_free);
    return result == 1 && unread ? -1 : result;
}

// MARK: - Helpers

void CSesameShims_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }
long CSesameShims_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

int CSesameShims_GENERAL_NAME_get(const GENERAL_NAME *name, const unsigned char **data, int *length) {
    const ASN1_STRING *string = NULL;
    switch (name->type) {
    case GEN_DNS: string = name->d.dNSName; break;
    case GEN_IPADD: string = name->d.iPAddress; break;
    case GEN_EMAIL: string = name->d.rfc822Name; break;
    case GEN_URI: string = name->d.uniformResourceIdentifier; break;
    default: break;
    }
    if (string == NULL) {
        *data = NULL;
        *length = 0;
    } else {
        *data = ASN1_STRING_get0_data(string);
        *length = ASN1_STRING_length(string);
    }
    return name->type;
}

void CSesameShims_X509V3_set_ctx(X509V3_CTX *ctx, X509 *issuer, X509 *subject) {
    X509V3_set_ctx(ctx, issuer, subject, NULL, NULL, 0);
    X509V3_set_ctx_nodb(ctx);
}
X509V3_CTX *CSesameShims_X509V3_CTX_new(void) { return calloc(1, sizeof(X509V3_CTX)); }
void CSesameShims_X509V3_CTX_free(X509V3_CTX *ctx) { free(ctx); }

static pthread_once_t legacy_once = PTHREAD_ONCE_INIT;
static int legacy_loaded = 0;
static void load_legacy(void) {
    // Loading any provider explicitly turns off the implicit "default" one, so load both.
    OSSL_PROVIDER *def = OSSL_PROVIDER_load(NULL, "default");
    OSSL_PROVIDER *legacy = OSSL_PROVIDER_load(NULL, "legacy");
    legacy_loaded = (def != NULL && legacy != NULL) ? 1 : 0;
}
int CSesameShims_load_legacy_provider(void) {
    pthread_once(&legacy_once, load_legacy);
    return legacy_loaded;
}

// MARK: - zlib

int CSesameShims_inflateInit2(z_streamp stream, int windowBits) { return inflateInit2(stream, windowBits); }
int CSesameShims_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

// MARK: - Linux event APIs

int CSesameShims_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
int CSesameShims_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &event);
}
int CSesameShims_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int capacity, int timeoutMilliseconds) {
    struct epoll_event buffer[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epfd, buffer, capacity, timeoutMilliseconds);
    for (int i = 0; i < count; i++) {
        events[i] = buffer[i].events;
        data[i] = buffer[i].data.u64;
    }
    return count;
}
int CSesameShims_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
int CSesameShims_name_thread(pthread_t thread, const char *name) { return pthread_setname_np(thread, name); }
int CSesameShims_accept_cloexec(int fd) { return accept4(fd, NULL, NULL, SOCK_CLOEXEC); }
int CSesameShims_spawn_close_from(void *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, from);
}
uint32_t CSesameShims_EPOLLIN(void) { return EPOLLIN; }
uint32_t CSesameShims_EPOLLOUT(void) { return EPOLLOUT; }
uint32_t CSesameShims_EPOLLERR(void) { return EPOLLERR; }
uint32_t CSesameShims_EPOLLHUP(void) { return EPOLLHUP; }
uint32_t CSesameShims_EPOLLRDHUP(void) { return EPOLLRDHUP; }

// MARK: - Name constraints (STACK_OF(GENERAL_SUBTREE) is macro-only)

NAME_CONSTRAINTS *CSesameShims_name_constraints(const X509 *x509, int *critical) {
    int crit = -1;
    NAME_CONSTRAINTS *constraints = X509_get_ext_d2i(x509, NID_name_constraints, &crit, NULL);
    *critical = crit;
    return constraints;
}

void CSesameShims_name_constraints_counts(const NAME_CONSTRAINTS *constraints, int *permitted, int *excluded) {
    *permitted = constraints->permittedSubtrees ? sk_GENERAL_SUBTREE_num(constraints->permittedSubtrees) : 0;
    *excluded = constraints->excludedSubtrees ? sk_GENERAL_SUBTREE_num(constraints->excludedSubtrees) : 0;
}

int CSesameShims_name_constraints_excluded_dns(const NAME_CONSTRAINTS *constraints, int index, char *buffer, int capacity) {
    if (constraints->excludedSubtrees == NULL || index < 0 || index >= sk_GENERAL_SUBTREE_num(constraints->excludedSubtrees)
        || capacity <= 0) {
        return -1;
    }
    GENERAL_SUBTREE *subtree = sk_GENERAL_SUBTREE_value(constraints->excludedSubtrees, index);
    if (subtree->base == NULL || subtree->base->type != GEN_DNS) return -1;
    const ASN1_STRING *name = subtree->base->d.dNSName;
    int length = ASN1_STRING_length(name);
    if (length >= capacity) length = capacity - 1;
    memcpy(buffer, ASN1_STRING_get0_data(name), (size_t)length);
    buffer[length] = 0;
    return length;
}

int CSesameShims_name_constraints_dns(const NAME_CONSTRAINTS *constraints, int permitted, int index, char *buffer,
                                      int capacity) {
    STACK_OF(GENERAL_SUBTREE) *subtrees = permitted ? constraints->permittedSubtrees : constraints->excludedSubtrees;
    if (subtrees == NULL || index < 0 || index >= sk_GENERAL_SUBTREE_num(subtrees) || capacity <= 0) return -1;
    GENERAL_SUBTREE *subtree = sk_GENERAL_SUBTREE_value(subtrees, index);
    if (subtree->base == NULL || subtree->base->type != GEN_DNS) return -1;
    const ASN1_STRING *name = subtree->base->d.dNSName;
    int length = ASN1_STRING_length(name);
    int copied = length >= capacity ? capacity - 1 : length;
    memcpy(buffer, ASN1_STRING_get0_data(name), (size_t)copied);
    buffer[copied] = 0;
    return length;
}

// MARK: - Authority key identifier and information access

int CSesameShims_authority_key_id(const X509 *x509, int *has_key_id, int *has_issuer, int *has_serial) {
    int crit = -1;
    AUTHORITY_KEYID *aki = X509_get_ext_d2i(x509, NID_authority_key_identifier, &crit, NULL);
    if (aki == NULL) return crit == -1 ? -1 : 0;
    *has_key_id = aki->keyid != NULL;
    *has_issuer = aki->issuer != NULL;
    *has_serial = aki->serial != NULL;
    AUTHORITY_KEYID_free(aki);
    return 1;
}

int CSesameShims_authority_key_id_names_self(const X509 *x509) {
    int crit = -1;
    AUTHORITY_KEYID *aki = X509_get_ext_d2i(x509, NID_authority_key_identifier, &crit, NULL);
    if (aki == NULL) return -1;
    int names_self = 1;
    if (aki->serial != NULL && ASN1_INTEGER_cmp(aki->serial, X509_get0_serialNumber(x509)) != 0) names_self = 0;
    if (aki->issuer != NULL) {
        int found = 0;
        for (int i = 0; i < sk_GENERAL_NAME_num(aki->issuer); i++) {
            const GENERAL_NAME *name = sk_GENERAL_NAME_value(aki->issuer, i);
            if (name->type == GEN_DIRNAME && X509_NAME_cmp(name->d.directoryName, X509_get_issuer_name(x509)) == 0) {
                found = 1;
            }
        }
        if (!found) names_self = 0;
    }
    AUTHORITY_KEYID_free(aki);
    return names_self;
}

int CSesameShims_information_access(const X509 *x509) {
    int crit = -1;
    AUTHORITY_INFO_ACCESS *info = X509_get_ext_d2i(x509, NID_info_access, &crit, NULL);
    if (info == NULL) return crit == -1 ? -1 : 0;
    AUTHORITY_INFO_ACCESS_free(info);
    return 1;
}

/// A skip count: -1 absent, -2 too large or negative.
static long skip_count(const ASN1_INTEGER *value) {
    if (value == NULL) return -1;
    int64_t result = 0;
    if (ASN1_INTEGER_get_int64(&result, value) != 1 || result < 0 || result > LONG_MAX) return -2;
    return (long)result;
}

int CSesameShims_policy_constraints(const X509 *x509, long *require_explicit, long *inhibit_mapping) {
    int crit = -1;
    POLICY_CONSTRAINTS *pc = X509_get_ext_d2i(x509, NID_policy_constraints, &crit, NULL);
    if (pc == NULL) return crit == -1 ? -1 : 0;
    *require_explicit = skip_count(pc->requireExplicitPolicy);
    *inhibit_mapping = skip_count(pc->inhibitPolicyMapping);
    POLICY_CONSTRAINTS_free(pc);
    return 1;
}

int CSesameShims_inhibit_any_policy(const X509 *x509, long *skip) {
    int crit = -1;
    ASN1_INTEGER *value = X509_get_ext_d2i(x509, NID_inhibit_any_policy, &crit, NULL);
    if (value == NULL) return crit == -1 ? -1 : 0;
    *skip = skip_count(value);
    ASN1_INTEGER_free(value);
    return 1;
}

/// Writes `object` as a dotted OID to `bio`.
static void write_oid(BIO *bio, const ASN1_OBJECT *object) {
    char text[128];
    int length = OBJ_obj2txt(text, sizeof text, object, 1);
    if (length > 0 && length < (int)sizeof text) BIO_write(bio, text, length);
    else BIO_write(bio, "?", 1);
}

/// The text `bio` holds, as a NUL-terminated string for OPENSSL_free.
static char *bio_text(BIO *bio) {
    char *data = NULL;
    long length = BIO_get_mem_data(bio, &data);
    char *result = OPENSSL_malloc((size_t)length + 1);
    if (result != NULL) {
        if (length > 0) memcpy(result, data, (size_t)length);
        result[length] = 0;
    }
    BIO_free(bio);
    return result;
}

char *CSesameShims_extended_key_usage_text(const X509 *x509, int limit, int *count, int *critical) {
    *critical = -1;
    EXTENDED_KEY_USAGE *usages = X509_get_ext_d2i(x509, NID_ext_key_usage, critical, NULL);
    if (usages == NULL) return NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    *count = sk_ASN1_OBJECT_num(usages);
    for (int i = 0; bio != NULL && i < *count && i < limit; i++) {
        write_oid(bio, sk_ASN1_OBJECT_value(usages, i));
        BIO_write(bio, "\n", 1);
    }
    sk_ASN1_OBJECT_pop_free(usages, ASN1_OBJECT_free);
    return bio == NULL ? NULL : bio_text(bio);
}

char *CSesameShims_certificate_policies_text(const X509 *x509, int limit, int *count, int *critical) {
    *critical = -1;
    CERTIFICATEPOLICIES *policies = X509_get_ext_d2i(x509, NID_certificate_policies, critical, NULL);
    if (policies == NULL) return NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    *count = sk_POLICYINFO_num(policies);
    for (int i = 0; bio != NULL && i < *count && i < limit; i++) {
        const POLICYINFO *policy = sk_POLICYINFO_value(policies, i);
        write_oid(bio, policy->policyid);
        for (int q = 0; q < sk_POLICYQUALINFO_num(policy->qualifiers) && q < limit; q++) {
            BIO_write(bio, " ", 1);
            write_oid(bio, sk_POLICYQUALINFO_value(policy->qualifiers, q)->pqualid);
        }
        BIO_write(bio, "\n", 1);
    }
    CERTIFICATEPOLICIES_free(policies);
    return bio == NULL ? NULL : bio_text(bio);
}

char *CSesameShims_policy_mappings_text(const X509 *x509, int limit, int *count, int *critical) {
    *critical = -1;
    POLICY_MAPPINGS *mappings = X509_get_ext_d2i(x509, NID_policy_mappings, critical, NULL);
    if (mappings == NULL) return NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    *count = sk_POLICY_MAPPING_num(mappings);
    for (int i = 0; bio != NULL && i < *count && i < limit; i++) {
        const POLICY_MAPPING *mapping = sk_POLICY_MAPPING_value(mappings, i);
        write_oid(bio, mapping->issuerDomainPolicy);
        BIO_write(bio, " ", 1);
        write_oid(bio, mapping->subjectDomainPolicy);
        BIO_write(bio, "\n", 1);
    }
    sk_POLICY_MAPPING_pop_free(mappings, POLICY_MAPPING_free);
    return bio == NULL ? NULL : bio_text(bio);
}

int CSesameShims_crl_distribution_points(const X509 *x509, int *count, int *incomplete) {
    int crit = -1;
    CRL_DIST_POINTS *points = X509_get_ext_d2i(x509, NID_crl_distribution_points, &crit, NULL);
    if (points == NULL) return crit == -1 ? -1 : 0;
    int n = sk_DIST_POINT_num(points);
    *count = n;
    *incomplete = 0;
    for (int i = 0; i < n; i++) {
        const DIST_POINT *point = sk_DIST_POINT_value(points, i);
        if (point->distpoint == NULL && point->CRLissuer == NULL) *incomplete += 1;
    }
    CRL_DIST_POINTS_free(points);
    return 1;
}

int CSesameShims_unique_ids(const X509 *x509) {
    const ASN1_BIT_STRING *issuer = NULL, *subject = NULL;
    X509_get0_uids(x509, &issuer, &subject);
    return (issuer != NULL ? 1 : 0) | (subject != NULL ? 2 : 0);
}

int CSesameShims_time_year(const ASN1_TIME *time, int *generalized) {
    struct tm parts;
    *generalized = ASN1_STRING_type(time) == V_ASN1_GENERALIZEDTIME;
    if (ASN1_TIME_to_tm(time, &parts) != 1) return -1;
    return parts.tm_year + 1900;
}

// MARK: - CRL stacks

STACK_OF(X509_CRL) *CSesameShims_sk_X509_CRL_new_null(void) { return sk_X509_CRL_new_null(); }

const ASN1_OBJECT *CSesameShims_policy_tree_user_policy(const X509_POLICY_TREE *tree, int index) {
    STACK_OF(X509_POLICY_NODE) *nodes = X509_policy_tree_get0_user_policies(tree);
    if (nodes == NULL || index < 0 || index >= sk_X509_POLICY_NODE_num(nodes)) return NULL;
    return X509_policy_node_get0_policy(sk_X509_POLICY_NODE_value(nodes, index));
}
int CSesameShims_sk_X509_CRL_push(STACK_OF(X509_CRL) *stack, X509_CRL *crl) { return sk_X509_CRL_push(stack, crl); }
void CSesameShims_sk_X509_CRL_free(STACK_OF(X509_CRL) *stack) { sk_X509_CRL_free(stack); }
