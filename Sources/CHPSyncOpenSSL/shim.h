#ifndef CHPSYNC_OPENSSL_SHIM_H
#define CHPSYNC_OPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/ec.h>
#include <openssl/rand.h>
#include <openssl/bio.h>

#endif
