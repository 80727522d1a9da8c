#include "cert-store.h"

#include "http-api.h"

#include <wincrypt.h>
#include <ncrypt.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace httpsys {

namespace {

constexpr DWORD kEncoding = X509_ASN_ENCODING | PKCS_7_ASN_ENCODING;

Napi::Object Result(Napi::Env env, DWORD code) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("code", Napi::Number::New(env, code));
  return out;
}

void ThrowType(Napi::Env env, const std::string& message) {
  Napi::TypeError error = Napi::TypeError::New(env, message);
  error.Set("code", Napi::String::New(env, "ERR_INVALID_ARG_TYPE"));
  error.ThrowAsJavaScriptException();
}

struct Store {
  HCERTSTORE handle = nullptr;
  ~Store() {
    if (handle) CertCloseStore(handle, 0);
  }
};

struct Cert {
  PCCERT_CONTEXT context = nullptr;
  ~Cert() {
    if (context) CertFreeCertificateContext(context);
  }
};

// LocalMachine\<name>, an existing store only (a mistyped name must not create
// one). Writing needs an elevated process: ERROR_ACCESS_DENIED otherwise.
HCERTSTORE OpenMachineStore(const std::wstring& name, bool write) {
  DWORD flags = CERT_SYSTEM_STORE_LOCAL_MACHINE | CERT_STORE_OPEN_EXISTING_FLAG;
  if (!write) flags |= CERT_STORE_READONLY_FLAG;
  return CertOpenStore(CERT_STORE_PROV_SYSTEM_W, 0, 0, flags, name.c_str());
}

std::string Hex(const BYTE* data, DWORD size) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (DWORD i = 0; i < size; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

// The SHA-1 thumbprint HTTP.SYS bindings name a certificate by, lowercase hex.
std::string Thumbprint(PCCERT_CONTEXT cert) {
  BYTE hash[20];
  DWORD size = sizeof(hash);
  if (!CertGetCertificateContextProperty(cert, CERT_SHA1_HASH_PROP_ID, hash, &size)) return std::string();
  return Hex(hash, size);
}

bool HasKeyLink(PCCERT_CONTEXT cert) {
  DWORD size = 0;
  return CertGetCertificateContextProperty(cert, CERT_KEY_PROV_INFO_PROP_ID, nullptr, &size) != FALSE;
}

// The key link (CERT_KEY_PROV_INFO_PROP_ID) of a certificate: which provider holds
// its private key and under what name. Reading it opens nothing: it is a property
// of the certificate, readable by whoever can read the store.
struct KeyLink {
  std::vector<uint64_t> buffer;
  CRYPT_KEY_PROV_INFO* info = nullptr;
};

bool ReadKeyLink(PCCERT_CONTEXT cert, KeyLink* link) {
  DWORD size = 0;
  if (!CertGetCertificateContextProperty(cert, CERT_KEY_PROV_INFO_PROP_ID, nullptr, &size)) return false;
  link->buffer.assign((size + 7) / 8, 0);
  link->info = reinterpret_cast<CRYPT_KEY_PROV_INFO*>(link->buffer.data());
  return CertGetCertificateContextProperty(cert, CERT_KEY_PROV_INFO_PROP_ID, link->info, &size) != FALSE;
}

// { name, cng } of the provider holding the key, or null without a key link.
// Provider type 0 is a CNG key storage provider; any other is a CryptoAPI CSP,
// which cannot sign with RSA-PSS (what TLS 1.3 needs of an RSA key).
Napi::Value KeyProvider(Napi::Env env, PCCERT_CONTEXT cert) {
  KeyLink link;
  if (!ReadKeyLink(cert, &link)) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  out.Set("name", link.info->pwszProvName ? Narrow(link.info->pwszProvName) : std::string());
  out.Set("cng", Napi::Boolean::New(env, link.info->dwProvType == 0));
  return out;
}

// Whether the linked private key opens and matches the certificate's public key
// (0), or why not: NTE_BAD_KEYSET (the key is gone), NTE_BAD_PUBLIC_KEY (another
// key), ERROR_ACCESS_DENIED / NTE_PERM (not this account's to use).
DWORD CheckPrivateKey(PCCERT_CONTEXT cert) {
  HCRYPTPROV_OR_NCRYPT_KEY_HANDLE key = 0;
  DWORD spec = 0;
  BOOL mustFree = FALSE;
  if (!CryptAcquireCertificatePrivateKey(
          cert, CRYPT_ACQUIRE_ALLOW_NCRYPT_KEY_FLAG | CRYPT_ACQUIRE_COMPARE_KEY_FLAG | CRYPT_ACQUIRE_SILENT_FLAG,
          nullptr, &key, &spec, &mustFree)) {
    return GetLastError();
  }
  if (mustFree) {
    if (spec == CERT_NCRYPT_KEY_SPEC) NCryptFreeObject(key);
    else CryptReleaseContext(key, 0);
  }
  return NO_ERROR;
}

// Deletes the persisted private key a certificate links to: an import that
// could not finish must not leave a machine key behind.
void DeleteLinkedKey(PCCERT_CONTEXT cert) {
  KeyLink link;
  if (!ReadKeyLink(cert, &link)) return;
  const CRYPT_KEY_PROV_INFO* info = link.info;
  if (info->dwProvType == 0) {  // a CNG key storage provider
    NCRYPT_PROV_HANDLE provider = 0;
    if (NCryptOpenStorageProvider(&provider, info->pwszProvName, 0) != ERROR_SUCCESS) return;
    NCRYPT_KEY_HANDLE key = 0;
    DWORD flags = (info->dwFlags & CRYPT_MACHINE_KEYSET) ? NCRYPT_MACHINE_KEY_FLAG : 0;
    if (NCryptOpenKey(provider, &key, info->pwszContainerName, info->dwKeySpec, flags | NCRYPT_SILENT_FLAG) ==
        ERROR_SUCCESS) {
      NCryptDeleteKey(key, 0);  // frees the handle too
    }
    NCryptFreeObject(provider);
  } else {  // a CryptoAPI provider
    HCRYPTPROV provider = 0;
    CryptAcquireContextW(&provider, info->pwszContainerName, info->pwszProvName, info->dwProvType,
                         CRYPT_DELETEKEYSET | (info->dwFlags & CRYPT_MACHINE_KEYSET) | CRYPT_SILENT);
  }
}

// ---------------------------------------------------------------------------
// PEM and the little DER it takes to make PKCS#8 of PKCS#1 and SEC1 keys

// The first block whose label is one of `labels`: its label and DER bytes.
// false with *code set when there is none, or it does not decode.
bool PemBlock(const std::string& text, const std::vector<std::string>& labels, std::string* label,
              std::vector<BYTE>* der, DWORD* code) {
  static const std::string begin = "-----BEGIN ";
  size_t at = 0;
  while ((at = text.find(begin, at)) != std::string::npos) {
    size_t labelStart = at + begin.size();
    size_t labelEnd = text.find("-----", labelStart);
    if (labelEnd == std::string::npos) break;
    std::string name = text.substr(labelStart, labelEnd - labelStart);
    std::string end = "-----END " + name + "-----";
    size_t bodyStart = labelEnd + 5;
    size_t bodyEnd = text.find(end, bodyStart);
    if (bodyEnd == std::string::npos) break;
    at = bodyEnd + end.size();
    bool wanted = false;
    for (const std::string& l : labels) wanted = wanted || l == name;
    if (!wanted) continue;  // e.g. the EC PARAMETERS block OpenSSL writes first
    std::string body = text.substr(bodyStart, bodyEnd - bodyStart);
    if (body.find("Proc-Type:") != std::string::npos) {
      *code = static_cast<DWORD>(NTE_NOT_SUPPORTED);  // OpenSSL's legacy encrypted PEM: use PKCS#8
      return false;
    }
    DWORD size = 0;
    if (!CryptStringToBinaryA(body.data(), static_cast<DWORD>(body.size()), CRYPT_STRING_BASE64, nullptr, &size,
                              nullptr, nullptr)) {
      *code = GetLastError();
      return false;
    }
    der->resize(size);
    if (!CryptStringToBinaryA(body.data(), static_cast<DWORD>(body.size()), CRYPT_STRING_BASE64, der->data(), &size,
                              nullptr, nullptr)) {
      *code = GetLastError();
      return false;
    }
    der->resize(size);
    *label = name;
    return true;
  }
  *code = static_cast<DWORD>(CRYPT_E_NOT_FOUND);
  return false;
}

void DerLength(std::vector<BYTE>* out, size_t length) {
  if (length < 0x80) {
    out->push_back(static_cast<BYTE>(length));
    return;
  }
  BYTE bytes[sizeof(size_t)];
  int n = 0;
  for (size_t v = length; v; v >>= 8) bytes[n++] = static_cast<BYTE>(v & 0xFF);
  out->push_back(static_cast<BYTE>(0x80 | n));
  while (n) out->push_back(bytes[--n]);
}

void DerAppend(std::vector<BYTE>* out, BYTE tag, const std::vector<BYTE>& content) {
  out->push_back(tag);
  DerLength(out, content.size());
  out->insert(out->end(), content.begin(), content.end());
}

// One TLV at data[*at]: its tag and content span; false if malformed.
bool DerRead(const std::vector<BYTE>& data, size_t* at, BYTE* tag, size_t* start, size_t* length) {
  size_t i = *at;
  if (i + 2 > data.size()) return false;
  *tag = data[i++];
  size_t len = data[i++];
  if (len & 0x80) {
    int n = len & 0x7F;
    if (n == 0 || n > 4 || i + n > data.size()) return false;
    len = 0;
    while (n--) len = (len << 8) | data[i++];
  }
  if (i + len > data.size()) return false;
  *start = i;
  *length = len;
  *at = i + len;
  return true;
}

// PrivateKeyInfo { version 0, AlgorithmIdentifier { algorithm, parameters }, OCTET STRING key } (RFC 5208).
std::vector<BYTE> WrapPkcs8(const std::vector<BYTE>& algorithm, const std::vector<BYTE>& key) {
  std::vector<BYTE> algorithmId;
  DerAppend(&algorithmId, 0x30, algorithm);
  std::vector<BYTE> body = {0x02, 0x01, 0x00};
  body.insert(body.end(), algorithmId.begin(), algorithmId.end());
  DerAppend(&body, 0x04, key);
  std::vector<BYTE> out;
  DerAppend(&out, 0x30, body);
  return out;
}

// PKCS#8 from a PEM key block: "PRIVATE KEY" and "ENCRYPTED PRIVATE KEY" as they
// are, "RSA PRIVATE KEY" (PKCS#1) and "EC PRIVATE KEY" (SEC1, RFC 5915, with its
// named curve) wrapped.
bool KeyToPkcs8(const std::string& label, const std::vector<BYTE>& der, std::vector<BYTE>* out, DWORD* code) {
  if (label == "PRIVATE KEY" || label == "ENCRYPTED PRIVATE KEY") {
    *out = der;
    return true;
  }
  if (label == "RSA PRIVATE KEY") {
    // rsaEncryption (1.2.840.113549.1.1.1), NULL parameters
    const std::vector<BYTE> rsa = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00};
    *out = WrapPkcs8(rsa, der);
    return true;
  }
  // ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING,
  //                             parameters [0] namedCurve OID OPTIONAL, publicKey [1] OPTIONAL }
  size_t at = 0, start = 0, length = 0;
  BYTE tag = 0;
  if (DerRead(der, &at, &tag, &start, &length) && tag == 0x30) {
    const size_t end = start + length;
    size_t inner = start;
    while (inner < end) {
      if (!DerRead(der, &inner, &tag, &start, &length)) break;
      if (tag != 0xA0) continue;
      size_t oidAt = start, oidStart = 0, oidLength = 0;
      if (!DerRead(der, &oidAt, &tag, &oidStart, &oidLength) || tag != 0x06) break;
      // id-ecPublicKey (1.2.840.10045.2.1), then the curve's OID
      std::vector<BYTE> ec = {0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01};
      ec.insert(ec.end(), der.begin() + static_cast<long>(start), der.begin() + static_cast<long>(oidAt));
      *out = WrapPkcs8(ec, der);
      return true;
    }
  }
  // No named curve in the key: nothing says which curve it is on.
  *code = static_cast<DWORD>(NTE_BAD_DATA);
  return false;
}

// ---------------------------------------------------------------------------

// The certificate with its key linked, into LocalMachine\<store>; the key is
// deleted again if that fails.
DWORD AddToStore(HCERTSTORE store, PCCERT_CONTEXT cert) {
  if (CertAddCertificateContextToStore(store, cert, CERT_STORE_ADD_REPLACE_EXISTING, nullptr)) return NO_ERROR;
  DWORD rc = GetLastError();
  DeleteLinkedKey(cert);
  return rc;
}

Napi::Value ImportPfx(Napi::Env env, HCERTSTORE target, const Napi::Buffer<BYTE>& pfx, const std::string& passphrase,
                      bool cng) {
  CRYPT_DATA_BLOB blob = {static_cast<DWORD>(pfx.Length()), pfx.Data()};
  std::wstring password = Widen(passphrase);
  // The key is persisted in the machine's key store (HTTP.SYS runs as SYSTEM),
  // not exportable, replacing a key container of the same name. cng: in a CNG key
  // storage provider whatever CSP the file names (PKCS12_ALWAYS_CNG_KSP; with
  // PKCS12_PREFER_CNG_KSP a CSP named in a PFX Windows exported still wins):
  // without it an RSA key lands in a CryptoAPI CSP, which cannot sign with
  // RSA-PSS, and Schannel needs that for TLS 1.3
  // (https://learn.microsoft.com/windows/win32/api/wincrypt/nf-wincrypt-pfximportcertstore).
  const DWORD flags = CRYPT_MACHINE_KEYSET | PKCS12_ALLOW_OVERWRITE_KEY | (cng ? PKCS12_ALWAYS_CNG_KSP : 0);
  Store pfxStore;
  pfxStore.handle = PFXImportCertStore(&blob, password.c_str(), flags);
  // A PFX written with no password at all is not the same as one with "".
  if (!pfxStore.handle && passphrase.empty()) pfxStore.handle = PFXImportCertStore(&blob, nullptr, flags);
  if (!pfxStore.handle) {
    // 86: the passphrase is wrong. Wine 8 refuses CRYPT_MACHINE_KEYSET without
    // saying why (no last error): that is reported as not supported.
    DWORD rc = GetLastError();
    return Result(env, rc != NO_ERROR ? rc : ERROR_NOT_SUPPORTED);
  }

  // The end-entity certificate is the one that came with a private key. The
  // others (the chain's CA certificates) go back to JS, which decides where
  // they belong.
  Cert cert;
  Napi::Array chain = Napi::Array::New(env);
  uint32_t n = 0;
  for (PCCERT_CONTEXT c = CertEnumCertificatesInStore(pfxStore.handle, nullptr); c;
       c = CertEnumCertificatesInStore(pfxStore.handle, c)) {
    if (!cert.context && HasKeyLink(c)) {
      cert.context = CertDuplicateCertificateContext(c);
    } else if (!HasKeyLink(c)) {
      chain.Set(n++, Napi::Buffer<BYTE>::Copy(env, c->pbCertEncoded, c->cbCertEncoded));
    }
  }
  if (!cert.context) return Result(env, static_cast<DWORD>(CRYPT_E_NO_KEY_PROPERTY));
  DWORD rc = AddToStore(target, cert.context);
  Napi::Object out = Result(env, rc);
  out.Set("thumbprint", rc == NO_ERROR ? Napi::Value(Napi::String::New(env, Thumbprint(cert.context))) : env.Null());
  out.Set("keyProvider", rc == NO_ERROR ? KeyProvider(env, cert.context) : env.Null());
  out.Set("chain", chain);
  return out;
}

Napi::Value ImportPem(Napi::Env env, HCERTSTORE target, const std::string& certPem, const std::string& keyPem,
                      const std::string& passphrase) {
  std::string label;
  std::vector<BYTE> certDer;
  DWORD rc = NO_ERROR;
  if (!PemBlock(certPem, {"CERTIFICATE"}, &label, &certDer, &rc)) return Result(env, rc);
  Cert cert;
  cert.context = CertCreateCertificateContext(kEncoding, certDer.data(), static_cast<DWORD>(certDer.size()));
  if (!cert.context) return Result(env, GetLastError());

  std::vector<BYTE> keyDer, pkcs8;
  if (!PemBlock(keyPem, {"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"}, &label,
                &keyDer, &rc) ||
      !KeyToPkcs8(label, keyDer, &pkcs8, &rc)) {
    return Result(env, rc);
  }

  // A persisted machine key in the Microsoft Software Key Storage Provider,
  // named after the certificate: importing the same certificate again replaces
  // its key (https://learn.microsoft.com/windows/win32/api/ncrypt/nf-ncrypt-ncryptimportkey).
  std::string thumbprint = Thumbprint(cert.context);
  std::wstring keyName = Widen("httpsys-" + thumbprint);
  std::wstring secret = Widen(passphrase);
  NCRYPT_PROV_HANDLE provider = 0;
  SECURITY_STATUS status = NCryptOpenStorageProvider(&provider, MS_KEY_STORAGE_PROVIDER, 0);
  if (status != ERROR_SUCCESS) return Result(env, static_cast<DWORD>(status));
  NCryptBuffer buffers[2] = {};
  buffers[0].BufferType = NCRYPTBUFFER_PKCS_KEY_NAME;
  buffers[0].cbBuffer = static_cast<ULONG>((keyName.size() + 1) * sizeof(wchar_t));
  buffers[0].pvBuffer = &keyName[0];
  buffers[1].BufferType = NCRYPTBUFFER_PKCS_SECRET;  // the password of an ENCRYPTED PRIVATE KEY
  buffers[1].cbBuffer = static_cast<ULONG>((secret.size() + 1) * sizeof(wchar_t));
  buffers[1].pvBuffer = &secret[0];
  NCryptBufferDesc parameters = {NCRYPTBUFFER_VERSION, label == "ENCRYPTED PRIVATE KEY" ? 2u : 1u, buffers};
  NCRYPT_KEY_HANDLE key = 0;
  status = NCryptImportKey(provider, 0, NCRYPT_PKCS8_PRIVATE_KEY_BLOB, &parameters, &key, pkcs8.data(),
                           static_cast<DWORD>(pkcs8.size()),
                           NCRYPT_MACHINE_KEY_FLAG | NCRYPT_OVERWRITE_KEY_FLAG | NCRYPT_DO_NOT_FINALIZE_FLAG);
  SecureZeroMemory(pkcs8.data(), pkcs8.size());
  SecureZeroMemory(keyDer.data(), keyDer.size());
  if (status == ERROR_SUCCESS) {
    DWORD policy = 0;  // not exportable
    status = NCryptSetProperty(key, NCRYPT_EXPORT_POLICY_PROPERTY, reinterpret_cast<PBYTE>(&policy), sizeof(policy),
                               NCRYPT_PERSIST_FLAG);
    if (status == ERROR_SUCCESS) status = NCryptFinalizeKey(key, NCRYPT_SILENT_FLAG);
    if (status != ERROR_SUCCESS) {
      NCryptDeleteKey(key, 0);
      key = 0;
    }
  }
  if (key) NCryptFreeObject(key);
  NCryptFreeObject(provider);
  if (status != ERROR_SUCCESS) return Result(env, static_cast<DWORD>(status));

  // Link the key to the certificate (a CNG key: provider type 0, key spec 0),
  // then make sure it is the certificate's key before it goes into the store.
  CRYPT_KEY_PROV_INFO link = {};
  link.pwszContainerName = &keyName[0];
  link.pwszProvName = const_cast<LPWSTR>(MS_KEY_STORAGE_PROVIDER);
  link.dwProvType = 0;
  link.dwFlags = CRYPT_MACHINE_KEYSET;
  link.dwKeySpec = 0;
  if (!CertSetCertificateContextProperty(cert.context, CERT_KEY_PROV_INFO_PROP_ID, 0, &link)) {
    rc = GetLastError();
  } else {
    rc = CheckPrivateKey(cert.context);  // NTE_BAD_PUBLIC_KEY: the key is another certificate's
  }
  if (rc == NO_ERROR) {
    rc = AddToStore(target, cert.context);
  } else {
    DeleteLinkedKey(cert.context);
  }
  Napi::Object out = Result(env, rc);
  out.Set("thumbprint", rc == NO_ERROR ? Napi::Value(Napi::String::New(env, thumbprint)) : env.Null());
  out.Set("keyProvider", rc == NO_ERROR ? KeyProvider(env, cert.context) : env.Null());
  out.Set("chain", Napi::Array::New(env));
  return out;
}

std::string StoreArg(const Napi::Object& spec) {
  Napi::Value store = spec.Get("store");
  return store.IsString() ? store.As<Napi::String>().Utf8Value() : std::string("My");
}

// certImport({ pfx: Buffer, passphrase?, cng?, store? }) or
// certImport({ certPem: string, keyPem: string, passphrase?, store? })
//   -> { code, thumbprint: lowercase hex SHA-1 | null, keyProvider: { name, cng } | null,
//        chain: Buffer[] (a PFX's certificates that came without a key, DER) }
// into LocalMachine\<store> ('My' by default; it must exist), with the private
// key persisted as a machine key, so HTTP.SYS (SYSTEM) can use it: a PEM key in the
// Microsoft Software Key Storage Provider, a PFX's where cng says (true: a CNG
// provider). Only the certificate with the key is added. Needs an elevated
// process: ERROR_ACCESS_DENIED (5) otherwise, before anything is made.
Napi::Value CertImport(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) {
    ThrowType(env, "certImport(spec) needs an object");
    return env.Undefined();
  }
  Napi::Object spec = info[0].As<Napi::Object>();
  Napi::Value pfx = spec.Get("pfx");
  Napi::Value certPem = spec.Get("certPem");
  Napi::Value keyPem = spec.Get("keyPem");
  Napi::Value passphrase = spec.Get("passphrase");
  Napi::Value store = spec.Get("store");
  Napi::Value cng = spec.Get("cng");
  bool isPfx = pfx.IsBuffer();
  if (!isPfx && !(certPem.IsString() && keyPem.IsString())) {
    ThrowType(env, "certImport needs { pfx: Buffer } or { certPem: string, keyPem: string }");
    return env.Undefined();
  }
  if (!passphrase.IsUndefined() && !passphrase.IsNull() && !passphrase.IsString()) {
    ThrowType(env, "certImport: passphrase must be a string");
    return env.Undefined();
  }
  if (!store.IsUndefined() && !store.IsString()) {
    ThrowType(env, "certImport: store must be a string such as 'My'");
    return env.Undefined();
  }
  if (!cng.IsUndefined() && !cng.IsBoolean()) {
    ThrowType(env, "certImport: cng must be a boolean");
    return env.Undefined();
  }
  std::string secret = passphrase.IsString() ? passphrase.As<Napi::String>().Utf8Value() : std::string();

  // The store first: an account that may not write it gets 5 with no key made.
  Store target;
  target.handle = OpenMachineStore(Widen(StoreArg(spec)), true);
  Napi::Value result;
  if (!target.handle) {
    result = Result(env, GetLastError());
  } else if (isPfx) {
    bool toCng = cng.IsBoolean() && cng.As<Napi::Boolean>().Value();
    result = ImportPfx(env, target.handle, pfx.As<Napi::Buffer<BYTE>>(), secret, toCng);
  } else {
    result = ImportPem(env, target.handle, certPem.As<Napi::String>().Utf8Value(),
                       keyPem.As<Napi::String>().Utf8Value(), secret);
  }
  Napi::Object out = result.As<Napi::Object>();
  if (!out.Has("thumbprint")) out.Set("thumbprint", env.Null());
  if (!out.Has("keyProvider")) out.Set("keyProvider", env.Null());
  if (!out.Has("chain")) out.Set("chain", Napi::Array::New(env));
  return out;
}

// certAdd({ der: Buffer, store }) -> { code, thumbprint | null }: a certificate
// without a key into LocalMachine\<store> (a chain's intermediates into 'CA',
// where Schannel finds them to send with the leaf). One that is there already
// stays as it is (CERT_STORE_ADD_USE_EXISTING). Needs an elevated process.
Napi::Value CertAdd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object spec = info[0].IsObject() ? info[0].As<Napi::Object>() : Napi::Object();
  if (!info[0].IsObject() || !spec.Get("der").IsBuffer() || !spec.Get("store").IsString()) {
    ThrowType(env, "certAdd needs { der: Buffer, store: string such as 'CA' }");
    return env.Undefined();
  }
  Napi::Buffer<BYTE> der = spec.Get("der").As<Napi::Buffer<BYTE>>();
  Store target;
  target.handle = OpenMachineStore(Widen(StoreArg(spec)), true);
  if (!target.handle) return Result(env, GetLastError());
  Cert cert;
  if (!CertAddEncodedCertificateToStore(target.handle, kEncoding, der.Data(), static_cast<DWORD>(der.Length()),
                                        CERT_STORE_ADD_USE_EXISTING, &cert.context)) {
    return Result(env, GetLastError());
  }
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("thumbprint", Thumbprint(cert.context));
  return out;
}

std::string NameText(const CERT_NAME_BLOB& name) {
  // "CN=host, O=Org, C=US": the order Windows shows (most specific first).
  const DWORD type = CERT_X500_NAME_STR | CERT_NAME_STR_REVERSE_FLAG;
  DWORD size = CertNameToStrW(X509_ASN_ENCODING, const_cast<CERT_NAME_BLOB*>(&name), type, nullptr, 0);
  if (size <= 1) return std::string();
  std::wstring text(size, L'\0');
  CertNameToStrW(X509_ASN_ENCODING, const_cast<CERT_NAME_BLOB*>(&name), type, &text[0], size);
  return Narrow(text.c_str());
}

double FileTimeToMs(const FILETIME& time) {
  ULARGE_INTEGER value;
  value.LowPart = time.dwLowDateTime;
  value.HighPart = time.dwHighDateTime;
  return (static_cast<double>(value.QuadPart) - 116444736000000000.0) / 10000.0;
}

Napi::Array DnsNames(Napi::Env env, PCCERT_CONTEXT cert) {
  Napi::Array names = Napi::Array::New(env);
  const CERT_INFO* info = cert->pCertInfo;
  PCERT_EXTENSION extension = CertFindExtension(szOID_SUBJECT_ALT_NAME2, info->cExtension, info->rgExtension);
  if (!extension) return names;
  CERT_ALT_NAME_INFO* alt = nullptr;
  DWORD size = 0;
  if (!CryptDecodeObjectEx(X509_ASN_ENCODING, X509_ALTERNATE_NAME, extension->Value.pbData, extension->Value.cbData,
                           CRYPT_DECODE_ALLOC_FLAG, nullptr, &alt, &size)) {
    return names;
  }
  uint32_t n = 0;
  for (DWORD i = 0; i < alt->cAltEntry; ++i) {
    if (alt->rgAltEntry[i].dwAltNameChoice == CERT_ALT_NAME_DNS_NAME) {
      names.Set(n++, Narrow(alt->rgAltEntry[i].pwszDNSName));
    }
  }
  LocalFree(alt);
  return names;
}

bool ParseThumbprint(const std::string& text, std::vector<BYTE>* out) {
  std::string hex;
  for (char c : text) {
    if (c == ' ' || c == ':') continue;  // as certmgr and some tools print it
    if (!isxdigit(static_cast<unsigned char>(c))) return false;
    hex += c;
  }
  if (hex.size() != 40) return false;
  for (size_t i = 0; i < 40; i += 2) out->push_back(static_cast<BYTE>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return true;
}

// certFind({ thumbprint, store? }) -> { code, found, subject, issuer, notBefore,
// notAfter (ms since the epoch), hasPrivateKey, privateKeyCode, keyProvider, dnsNames }
// from LocalMachine\<store> ('My' by default). found false with code 0 when the
// store has no such certificate; code 2 when there is no such store. hasPrivateKey:
// a private key is linked to it (read without opening the key); keyProvider: the
// provider holding it, { name, cng } (null without a key); privateKeyCode: 0 if
// that key opens for this account and matches, else why not (null without a key).
// A machine key imported elevated usually does not open for another account or
// an unelevated token, while HTTP.SYS uses it through LSASS: JS decides what a
// code means.
Napi::Value CertFind(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<BYTE> hash;
  Napi::Object spec = info[0].IsObject() ? info[0].As<Napi::Object>() : Napi::Object();
  if (!info[0].IsObject() || !spec.Get("thumbprint").IsString() ||
      !ParseThumbprint(spec.Get("thumbprint").As<Napi::String>().Utf8Value(), &hash)) {
    ThrowType(env, "certFind needs { thumbprint: 40 hex digits, store? }");
    return env.Undefined();
  }
  if (!spec.Get("store").IsUndefined() && !spec.Get("store").IsString()) {
    ThrowType(env, "certFind: store must be a string such as 'My'");
    return env.Undefined();
  }
  Store store;
  store.handle = OpenMachineStore(Widen(StoreArg(spec)), false);
  if (!store.handle) return Result(env, GetLastError());
  CRYPT_HASH_BLOB blob = {static_cast<DWORD>(hash.size()), hash.data()};
  Cert cert;
  cert.context = CertFindCertificateInStore(store.handle, kEncoding, 0, CERT_FIND_SHA1_HASH, &blob, nullptr);
  Napi::Object out = Result(env, NO_ERROR);
  out.Set("found", Napi::Boolean::New(env, cert.context != nullptr));
  if (!cert.context) return out;
  const CERT_INFO* certInfo = cert.context->pCertInfo;
  out.Set("subject", NameText(certInfo->Subject));
  out.Set("issuer", NameText(certInfo->Issuer));
  out.Set("notBefore", Napi::Number::New(env, FileTimeToMs(certInfo->NotBefore)));
  out.Set("notAfter", Napi::Number::New(env, FileTimeToMs(certInfo->NotAfter)));
  bool hasKey = HasKeyLink(cert.context);
  out.Set("hasPrivateKey", Napi::Boolean::New(env, hasKey));
  out.Set("privateKeyCode", hasKey ? Napi::Value(Napi::Number::New(env, CheckPrivateKey(cert.context))) : env.Null());
  out.Set("keyProvider", KeyProvider(env, cert.context));
  out.Set("dnsNames", DnsNames(env, cert.context));
  return out;
}

}  // namespace

void InitCertStore(Napi::Env env, Napi::Object exports) {
  exports.Set("certImport", Napi::Function::New(env, CertImport, "certImport"));
  exports.Set("certFind", Napi::Function::New(env, CertFind, "certFind"));
  exports.Set("certAdd", Napi::Function::New(env, CertAdd, "certAdd"));
}

}  // namespace httpsys
