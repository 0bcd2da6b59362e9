"""TensorFlow's string hashes, so that a string lands in the bucket TensorFlow gives it:

- `fingerprint64`: FarmHash's Fingerprint64 (farmhashna's Hash64), what TensorFlow's
  `Fingerprint64` and `tf.string_to_hash_bucket_fast` use (the `pyfarmhash` package, Google's
  FarmHash compiled);
- `siphash24`: SipHash-2-4 under a 128-bit key, `tf.string_to_hash_bucket_strong`'s keyed hash;
- `legacy_hash64`: TensorFlow's own Hash64 (a MurmurHash2-64 variant, seed 0xDECAFCAFFE), what the
  legacy `tf.string_to_hash_bucket` uses;
- `fingerprint_cat64`: TensorFlow's FingerprintCat64, combining two fingerprints (feature crosses).
"""

_MASK = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995
LEGACY_SEED = 0xDECAFCAFFE


def fingerprint64(data):
    """FarmHash Fingerprint64 of `data` (bytes) as an unsigned 64-bit int."""
    try:
        import farmhash
    except ImportError as exc:  # a default dependency: only a broken install lacks it
        raise ImportError("graphflow hashes strings as TensorFlow does with FarmHash's Fingerprint64, "
                          "from the pyfarmhash package: pip install pyfarmhash") from exc
    return farmhash.fingerprint64(bytes(data))


def _shift_mix(value):
    return value ^ (value >> 47)


def fingerprint_cat64(fp1, fp2):
    """TensorFlow's FingerprintCat64(fp1, fp2) (tensorflow/core/platform/fingerprint.h)."""
    result = fp1 ^ _MUL
    result ^= (_shift_mix((fp2 * _MUL) & _MASK) * _MUL) & _MASK
    result = (result * _MUL) & _MASK
    result = (_shift_mix(result) * _MUL) & _MASK
    return _shift_mix(result)


def legacy_hash64(data, seed=LEGACY_SEED):
    """TensorFlow's Hash64(data, n, seed) (tensorflow/core/lib/hash/hash.cc)."""
    data = bytes(data)
    n = len(data)
    h = (seed ^ (n * _MUL)) & _MASK
    end = n - n % 8
    for i in range(0, end, 8):
        k = (int.from_bytes(data[i:i + 8], "little") * _MUL) & _MASK
        k = ((k ^ (k >> 47)) * _MUL) & _MASK
        h = ((h ^ k) * _MUL) & _MASK
    if n % 8:
        h = ((h ^ int.from_bytes(data[end:], "little")) * _MUL) & _MASK
    h = ((h ^ (h >> 47)) * _MUL) & _MASK
    return h ^ (h >> 47)


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _MASK


def _sip_rounds(v0, v1, v2, v3, count):
    for _ in range(count):
        v0 = (v0 + v1) & _MASK
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & _MASK
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & _MASK
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & _MASK
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(key0, key1, data):
    """SipHash-2-4 of `data` (bytes) under the key (key0, key1), two unsigned 64-bit ints."""
    data = bytes(data)
    key0, key1 = key0 & _MASK, key1 & _MASK
    v0 = key0 ^ 0x736F6D6570736575
    v1 = key1 ^ 0x646F72616E646F6D
    v2 = key0 ^ 0x6C7967656E657261
    v3 = key1 ^ 0x7465646279746573
    n = len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[end:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3
