/*
 * seal(key32, nonce12, aad, parts, out, tag16) -> undefined
 *
 * One AES-256-GCM message: the plaintext given as an array of Uint8Arrays
 * (a chunk as its parts arrived from the network, never joined) is
 * encrypted into `out`, from its first byte, and the tag written into tag16.
 * The native half of src/lib/encryption/format.ts's sealPartsInto: node:crypto's
 * update allocates its output, where this writes into a buffer the caller
 * reuses once the chunk is stored (src/lib/encryption/seal-stream.ts). A
 * TypeError for a wrong argument (out shorter than the parts, or overlapping
 * one), before any byte is written.
 *
 * openPart(key32, nonce12, aadPadded, text, expectedTag16, counter16, part, out) -> boolean
 *
 * The native half of src/lib/encryption/gcm-part.ts's openPart: the GMAC of
 * aadPadded || text is checked against expectedTag (the stored GCM tag
 * already corrected by the caller), then `part`, a slice of `text`, is
 * AES-256-CTR-decrypted from `counter` into `out`. false when the tag does
 * not match (nothing is written to out then) or OpenSSL fails; a TypeError
 * when an argument is not a Uint8Array (Buffer) of an allowed length, before
 * any byte of it is read.
 *
 * Why native: node:crypto builds a cipher object and its OpenSSL context for
 * every call, twice a Range read, which costs more than the AES and GHASH
 * over a 64 KiB chunk. Here the two contexts are made once per module
 * instance (each worker thread loads its own) and only rekeyed per call.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <node_api.h>
#include <openssl/evp.h>

typedef struct {
  EVP_CIPHER_CTX *gcm;
  EVP_CIPHER_CTX *ctr;
  EVP_CIPHER_CTX *seal;
} contexts;

static void free_contexts(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  contexts *c = data;
  EVP_CIPHER_CTX_free(c->gcm);
  EVP_CIPHER_CTX_free(c->ctr);
  EVP_CIPHER_CTX_free(c->seal);
  free(c);
}

typedef struct {
  unsigned char *data;
  size_t length;
} bytes;

static napi_value type_error(napi_env env, const char *message) {
  napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", message);
  return NULL;
}

/* The bytes of a Uint8Array (a Buffer is one); false for anything else. */
static int bytes_of(napi_env env, napi_value v, bytes *out) {
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  napi_typedarray_type type;
  size_t length;
  void *data;
  if (napi_get_typedarray_info(env, v, &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) return 0;
  out->data = data;
  out->length = length;
  return 1;
}

static napi_value open_part(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  contexts *c;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&c) != napi_ok) return NULL;
  if (argc < 8) return type_error(env, "openPart takes 8 arguments");
  enum { KEY, NONCE, AAD, TEXT, TAG, COUNTER, PART, OUT };
  bytes a[8];
  for (size_t i = 0; i < 8; i++) {
    if (!bytes_of(env, argv[i], &a[i])) return type_error(env, "every argument of openPart must be a Uint8Array or Buffer");
  }
  if (a[KEY].length != 32) return type_error(env, "the key must be 32 bytes");
  if (a[NONCE].length != 12) return type_error(env, "the nonce must be 12 bytes");
  if (a[TAG].length != 16) return type_error(env, "the tag must be 16 bytes");
  if (a[COUNTER].length != 16) return type_error(env, "the counter must be 16 bytes");
  if (a[AAD].length > INT_MAX || a[TEXT].length > INT_MAX) return type_error(env, "the associated data and text must each be below 2 GiB");
  if (a[OUT].length < a[PART].length) return type_error(env, "out must be at least as long as part");
  /* part must be a view of text's own bytes (compared as addresses, the only way to tell). */
  uintptr_t text_at = (uintptr_t)a[TEXT].data, part_at = (uintptr_t)a[PART].data;
  if (a[PART].length > 0
      && (a[PART].length > a[TEXT].length || part_at < text_at || part_at - text_at > a[TEXT].length - a[PART].length)) {
    return type_error(env, "part must lie inside text");
  }

  /* The cipher was set once at load; each call only sets key and nonce (and resets the GHASH state). */
  int len;
  unsigned char none[16];
  int ok = EVP_DecryptInit_ex(c->gcm, NULL, NULL, a[KEY].data, a[NONCE].data) == 1
    && EVP_DecryptUpdate(c->gcm, NULL, &len, a[AAD].data, (int)a[AAD].length) == 1
    && EVP_DecryptUpdate(c->gcm, NULL, &len, a[TEXT].data, (int)a[TEXT].length) == 1
    && EVP_CIPHER_CTX_ctrl(c->gcm, EVP_CTRL_GCM_SET_TAG, 16, a[TAG].data) == 1
    /* OpenSSL's constant-time tag comparison; a GCM final writes no bytes. */
    && EVP_DecryptFinal_ex(c->gcm, none, &len) == 1;
  if (ok && a[PART].length > 0) {
    ok = EVP_DecryptInit_ex(c->ctr, NULL, NULL, a[KEY].data, a[COUNTER].data) == 1
      && EVP_DecryptUpdate(c->ctr, a[OUT].data, &len, a[PART].data, (int)a[PART].length) == 1;
  }
  napi_value result;
  if (napi_get_boolean(env, ok, &result) != napi_ok) return NULL;
  return result;
}

/* The most parts a chunk arrives in that seal takes (a 64 KiB chunk from 1-byte reads is absurd, but allowed up to this). */
#define MAX_PARTS 65536

static napi_value seal(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  contexts *c;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&c) != napi_ok) return NULL;
  if (argc < 6) return type_error(env, "seal takes 6 arguments");
  enum { KEY, NONCE, AAD, PARTS, OUT, TAG };
  bytes key, nonce, aad, out, tag;
  if (!bytes_of(env, argv[KEY], &key) || !bytes_of(env, argv[NONCE], &nonce) || !bytes_of(env, argv[AAD], &aad)
      || !bytes_of(env, argv[OUT], &out) || !bytes_of(env, argv[TAG], &tag)) {
    return type_error(env, "key, nonce, aad, out and tag of seal must be Uint8Arrays or Buffers");
  }
  if (key.length != 32) return type_error(env, "the key must be 32 bytes");
  if (nonce.length != 12) return type_error(env, "the nonce must be 12 bytes");
  if (tag.length != 16) return type_error(env, "the tag must be 16 bytes");
  if (aad.length > INT_MAX) return type_error(env, "the associated data must be below 2 GiB");
  bool is_array;
  uint32_t n;
  if (napi_is_array(env, argv[PARTS], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[PARTS], &n) != napi_ok) {
    return type_error(env, "parts must be an array");
  }
  if (n > MAX_PARTS) return type_error(env, "too many parts");
  bytes *parts = n == 0 ? NULL : malloc(n * sizeof *parts);
  if (n > 0 && parts == NULL) {
    napi_throw_error(env, NULL, "gcm_part: out of memory");
    return NULL;
  }
  /* Every part checked before a byte is written: its type, the total's room in out, no overlap with out. */
  size_t total = 0;
  uintptr_t out_at = (uintptr_t)out.data;
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    if (napi_get_element(env, argv[PARTS], i, &v) != napi_ok || !bytes_of(env, v, &parts[i])) {
      free(parts);
      return type_error(env, "every part must be a Uint8Array or Buffer");
    }
    uintptr_t at = (uintptr_t)parts[i].data;
    if (parts[i].length > 0 && at < out_at + out.length && out_at < at + parts[i].length) {
      free(parts);
      return type_error(env, "out must not overlap a part");
    }
    total += parts[i].length;
    if (total > out.length || total > INT_MAX) {
      free(parts);
      return type_error(env, "out must be at least as long as the parts together");
    }
  }
  int len;
  int ok = EVP_EncryptInit_ex(c->seal, NULL, NULL, key.data, nonce.data) == 1
    && EVP_EncryptUpdate(c->seal, NULL, &len, aad.data, (int)aad.length) == 1;
  size_t at = 0;
  for (uint32_t i = 0; ok && i < n; i++) {
    if (parts[i].length == 0) continue;
    /* GCM is a stream cipher mode: each update writes exactly its input's length. */
    ok = EVP_EncryptUpdate(c->seal, out.data + at, &len, parts[i].data, (int)parts[i].length) == 1;
    at += (size_t)len;
  }
  free(parts);
  ok = ok && EVP_EncryptFinal_ex(c->seal, out.data + at, &len) == 1
    && EVP_CIPHER_CTX_ctrl(c->seal, EVP_CTRL_GCM_GET_TAG, 16, tag.data) == 1;
  if (!ok) {
    napi_throw_error(env, NULL, "gcm_part: OpenSSL failed to seal");
    return NULL;
  }
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

NAPI_MODULE_INIT() {
  contexts *c = calloc(1, sizeof *c);
  if (c == NULL) {
    napi_throw_error(env, NULL, "gcm_part: out of memory");
    return NULL;
  }
  c->gcm = EVP_CIPHER_CTX_new();
  c->ctr = EVP_CIPHER_CTX_new();
  c->seal = EVP_CIPHER_CTX_new();
  if (c->gcm == NULL || c->ctr == NULL || c->seal == NULL
      || EVP_DecryptInit_ex(c->gcm, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1
      || EVP_DecryptInit_ex(c->ctr, EVP_aes_256_ctr(), NULL, NULL, NULL) != 1
      || EVP_EncryptInit_ex(c->seal, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1) {
    free_contexts(env, c, NULL);
    napi_throw_error(env, NULL, "gcm_part: OpenSSL has no AES-256-GCM or AES-256-CTR here");
    return NULL;
  }
  if (napi_set_instance_data(env, c, free_contexts, NULL) != napi_ok) {
    free_contexts(env, c, NULL);
    return NULL;
  }
  napi_value f, g;
  if (napi_create_function(env, "openPart", NAPI_AUTO_LENGTH, open_part, c, &f) != napi_ok
      || napi_set_named_property(env, exports, "openPart", f) != napi_ok
      || napi_create_function(env, "seal", NAPI_AUTO_LENGTH, seal, c, &g) != napi_ok
      || napi_set_named_property(env, exports, "seal", g) != napi_ok) {
    return NULL;
  }
  return exports;
}
