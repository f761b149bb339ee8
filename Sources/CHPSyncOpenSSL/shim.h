#ifndef CHPSYNC_OPENSSL_SHIM_H
#define CHPSYNC_OPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/ec.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/decoder.h>
#include <openssl/kdf.h>

// An EC private key from PEM through EC decoders only (NULL when the PEM holds no EC key).
// OpenSSL 3's PEM_read_bio_PrivateKey first gathers every provider's decoders for every key
// type: about a third of the instructions a command spends loading its identity.
static inline EVP_PKEY *hp_decode_ec_private_key_pem(const void *pem, int length) {
    EVP_PKEY *key = NULL;
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    OSSL_DECODER_CTX *ctx = OSSL_DECODER_CTX_new_for_pkey(&key, "PEM", NULL, "EC", EVP_PKEY_KEYPAIR, NULL, NULL);
    if (ctx != NULL) {
        if (!OSSL_DECODER_from_bio(ctx, bio)) {
            EVP_PKEY_free(key);
            key = NULL;
        }
        OSSL_DECODER_CTX_free(ctx);
    }
    BIO_free(bio);
    return key;
}

// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl; Swift cannot call macros.
static inline int hp_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

// SSL_CTX_set_mode is a macro over SSL_CTX_ctrl; Swift cannot call macros.
static inline long hp_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

// SSL_CTX_set_read_ahead is a macro over SSL_CTX_ctrl; Swift cannot call macros.
static inline long hp_SSL_CTX_set_read_ahead(SSL_CTX *ctx, long on) {
    return SSL_CTX_set_read_ahead(ctx, on);
}

// SSL_CTX_set_session_cache_mode is a macro over SSL_CTX_ctrl; Swift cannot call macros.
static inline long hp_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

// SSL_OP_NO_TICKET expands to a shift-and-cast expression that Swift does not import.
static inline uint64_t hp_SSL_OP_NO_TICKET(void) {
    return SSL_OP_NO_TICKET;
}

// SSL_OP_CIPHER_SERVER_PREFERENCE and SSL_OP_PRIORITIZE_CHACHA expand to shift-and-cast
// expressions that Swift does not import.
static inline uint64_t hp_SSL_OP_CIPHER_SERVER_PREFERENCE(void) {
    return SSL_OP_CIPHER_SERVER_PREFERENCE;
}

static inline uint64_t hp_SSL_OP_PRIORITIZE_CHACHA(void) {
    return SSL_OP_PRIORITIZE_CHACHA;
}

// BIO_get_mem_data is a macro over BIO_ctrl; Swift cannot call macros.
static inline long hp_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

// EVP_PKEY_Q_keygen is variadic; Swift cannot call C variadic functions.
static inline EVP_PKEY *hp_EVP_PKEY_Q_keygen_ec(const char *curve) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", curve);
}

#endif
