#!/usr/bin/env python3
"""Golden values for src/corpus/minhash_test.cc, from datasketch's MinHash.

Builds 300 token lists by the rule the C++ test repeats (record r: 8 + r % 60 tokens,
token j = "t<(r * 31 + j * 17) % 97>", and "a b" as token 3 when r % 5 == 0), their
5-token shingles as bench/corpus_datasketch.py builds them (tokens with whitespace
spelled with '_', joined by spaces), MinHash(num_perm=128, seed=1) over them, and
prints the first 8 slots of records 0, 1 and 5 and a checksum over every slot:
sum of slot * (r * 128 + i + 1) mod 2^64.
"""
from datasketch import MinHash


def tokens(r):
    t = [f"t{(r * 31 + j * 17) % 97}" for j in range(8 + r % 60)]
    if r % 5 == 0:
        t[3] = "a b"
    return t


def main():
    checksum = 0
    for r in range(300):
        toks = [t.replace(" ", "_") for t in tokens(r)]
        k = min(5, len(toks))
        m = MinHash(num_perm=128, seed=1)
        m.update_batch([" ".join(toks[i:i + k]).encode() for i in range(len(toks) - k + 1)])
        for i, v in enumerate(m.hashvalues):
            checksum = (checksum + int(v) * (r * 128 + i + 1)) % 2**64
        if r in (0, 1, 5):
            print(r, [int(v) for v in m.hashvalues[:8]])
    print("checksum", checksum)


if __name__ == "__main__":
    main()
