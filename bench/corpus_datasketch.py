#!/usr/bin/env python3
"""Near-duplicate clusters by datasketch (MinHash + MinHashLSH), compared with kvault's.

Reads the normalised tokens `kvault corpus dedup --dump-tokens` wrote (one record a
line: id TAB tokens), builds the same shingles (--shingle tokens, joined by spaces),
MinHash with --num-perm slots, MinHashLSH at --threshold, every record queried, each
candidate verified by estimated Jaccard >= threshold, clusters by union-find: the
same procedure as kvault's, through datasketch's own hashing and banding.

Then compares with kvault's marks (`--marks`, JSON Lines of record, duplicate_of) and
with the planted pairs (truth.json of corpus_make_records.py): pairwise precision and
recall of "same cluster", cluster counts, how many clusters are identical, and the
times; with --kvault-report (the `corpus dedup --json` output), kvault's near-dedup
time (signatures incl. tokenizing and normalising, LSH, verification) and the speed
ratio. Prints one JSON object.
"""
import argparse
import json
import time
from itertools import combinations


def union_find(n):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def unite(a, b):
        a, b = find(a), find(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    return find, unite


def cluster_pairs(groups):
    """Every unordered pair of ids that share a cluster."""
    pairs = set()
    for members in groups:
        for a, b in combinations(sorted(members), 2):
            pairs.add((a, b))
    return pairs


def groups_of(ids, find):
    by_root = {}
    for i, rid in enumerate(ids):
        by_root.setdefault(find(i), []).append(rid)
    return [g for g in by_root.values() if len(g) > 1]


def datasketch_clusters(ids, lines, a):
    from datasketch import MinHash, MinHashLSH
    t0 = time.perf_counter()
    sigs = []
    for line in lines:
        toks = line.split(" ")
        k = min(a.shingle, len(toks))
        shingles = {" ".join(toks[i:i + k]).encode() for i in range(len(toks) - k + 1)}
        m = MinHash(num_perm=a.num_perm, seed=1)
        m.update_batch(list(shingles))
        sigs.append(m)
    t1 = time.perf_counter()
    lsh = MinHashLSH(threshold=a.threshold, num_perm=a.num_perm)
    for i, m in enumerate(sigs):
        lsh.insert(str(i), m)
    find, unite = union_find(len(ids))
    for i, m in enumerate(sigs):
        for other in lsh.query(m):
            j = int(other)
            if j > i and m.jaccard(sigs[j]) >= a.threshold:
                unite(i, j)
    t2 = time.perf_counter()
    return groups_of(ids, find), {"minhash_s": t1 - t0, "lsh_and_verify_s": t2 - t1, "total_s": t2 - t0,
                                  "bands_rows": list(lsh.b_r) if hasattr(lsh, "b_r") else [lsh.b, lsh.r]}


def kvault_clusters(ids, marks_path):
    index = {rid: i for i, rid in enumerate(ids)}
    find, unite = union_find(len(ids))
    with open(marks_path) as f:
        for line in f:
            m = json.loads(line)
            unite(index[m["record"]], index[m["duplicate_of"]])
    return groups_of(ids, find)


def truth_clusters(ids, truth_path):
    with open(truth_path) as f:
        truth = json.load(f)
    index = {rid: i for i, rid in enumerate(ids)}
    find, unite = union_find(len(ids))
    missing = 0
    for kind in ("exact", "near"):
        for a, b in truth[kind]:
            if a in index and b in index:
                unite(index[a], index[b])
            else:
                missing += 1
    return groups_of(ids, find), missing


def agreement(found, reference):
    tp = len(found & reference)
    return {"pairs_found": len(found), "pairs_reference": len(reference),
            "precision": tp / len(found) if found else 1.0, "recall": tp / len(reference) if reference else 1.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--marks", required=True)
    ap.add_argument("--truth")
    ap.add_argument("--kvault-report")
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--num-perm", type=int, default=128)
    ap.add_argument("--shingle", type=int, default=5)
    a = ap.parse_args()
    ids, lines = [], []
    with open(a.tokens) as f:
        for line in f:
            rid, _, toks = line.rstrip("\n").partition("\t")
            ids.append(rid)
            lines.append(toks)
    ds_groups, ds_time = datasketch_clusters(ids, lines, a)
    kv_groups = kvault_clusters(ids, a.marks)
    ds_pairs, kv_pairs = cluster_pairs(ds_groups), cluster_pairs(kv_groups)
    out = {"records": len(ids), "datasketch": {"clusters": len(ds_groups), "seconds": ds_time},
           "kvault": {"clusters": len(kv_groups)},
           "kvault_vs_datasketch": agreement(kv_pairs, ds_pairs),
           "clusters_identical": sum(1 for g in kv_groups if frozenset(g) in {frozenset(x) for x in ds_groups})}
    if a.kvault_report:
        with open(a.kvault_report) as f:
            secs = json.load(f)["seconds"]
        near_s = secs["signatures"] + secs["lsh"] + secs["verify"]
        out["kvault"]["near_dedup_s"] = near_s
        out["speed_ratio"] = ds_time["total_s"] / near_s
    if a.truth:
        tr_groups, missing = truth_clusters(ids, a.truth)
        tr_pairs = cluster_pairs(tr_groups)
        out["truth_pairs_missing_ids"] = missing
        out["kvault_vs_planted"] = agreement(kv_pairs, tr_pairs)
        out["datasketch_vs_planted"] = agreement(ds_pairs, tr_pairs)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
