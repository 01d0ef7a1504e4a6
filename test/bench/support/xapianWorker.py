#!/usr/bin/python3
"""Xapian 1.4 (C++, Debian's python3-xapian) as a peer of the search benchmarks.

Indexes what the JS workers index, the way Xapian is meant to be used: title (wdf x2, as
Periscope's title weight 2), body text and the URL's words (x1), Porter stemming (Xapian's
"porter" is the original algorithm, as the npm `stemmer` Periscope uses) applied to every term
(STEM_ALL), Lucene's 33 English stop words dropped at index and query time, positions kept
(phrases work, as in Periscope). Ranking is BM25Weight with Periscope's k1 and b (k2 = 0,
k3 = 1: query words repeated count that many times, as in Periscope).

Queries go through QueryParser with OP_OR: a ranked disjunction, as every engine of the bench
runs both query sets (benchQueries.ts). Top 10 per query, with the stored title and URL read
for each hit; "with snippets" also makes MSet.snippet over the stored text.

Modes:
  bench <inmemory|glass> <corpus.jsonl> <queries.json> <db dir> <k1> <b> <stopwords.json> [max passages]
      prints one JSON line with the same figures as searchWorker.ts
  rank <docs.jsonl> <queries.json> <k1> <b> <title weight> <stopwords.json> <depth> [expand=<docs>:<terms>] [spelling=<db dir>]
      docs are {id, title, text}; queries [{id, text}]; prints {query id: [doc ids]} (relevance).
      expand: Xapian's own query expansion, its ESet of the best <terms> terms of the query's
      first <docs> documents (an RSet), added to the query with OP_OR as Xapian's documentation
      does relevance feedback, the expanded query ranked again.
      spelling: Xapian's own spelling correction (the words indexed with FLAG_SPELLING, the query
      parsed with FLAG_SPELLING_CORRECTION, its corrected query string searched when it gives
      one), on a glass database in <db dir> (the in-memory backend keeps no spelling data).
      Terms are stemmed as Xapian's spelling correction expects (STEM_SOME: each word indexed
      as typed and as a Z-prefixed stem, queries searching the stems): with STEM_ALL no word as
      typed is a term, so it would "correct" every word.

Must run under /usr/bin/python3 (Debian's modules).
"""
import gc
import json
import os
import re
import shutil
import sys
import time
from urllib.parse import unquote, urlsplit

import xapian


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e6
    return 0.0


def url_words(href):
    """Periscope's urlWords: host labels without www, path segments and fragment as words."""
    try:
        parts = urlsplit(href)
    except ValueError:
        return ""
    host = re.sub(r"^www\.", "", (parts.hostname or "")).replace(".", " ")
    path = unquote(parts.path)
    rest = re.sub(r"[/._\-~+=%?#&]+", " ", path + " " + parts.fragment)
    return (host + " " + rest).strip()


def analysis(stopwords_path):
    stemmer = xapian.Stem("porter")
    stopper = xapian.SimpleStopper()
    with open(stopwords_path) as f:
        for word in json.load(f):
            stopper.add(word)
    return stemmer, stopper


def term_generator(stemmer, stopper):
    tg = xapian.TermGenerator()
    tg.set_stemmer(stemmer)
    tg.set_stemming_strategy(xapian.TermGenerator.STEM_ALL)
    tg.set_stopper(stopper)
    tg.set_stopper_strategy(xapian.TermGenerator.STOP_ALL)
    return tg


def query_parser(db, stemmer, stopper):
    qp = xapian.QueryParser()
    qp.set_stemmer(stemmer)
    qp.set_stemming_strategy(xapian.QueryParser.STEM_ALL)
    qp.set_stopper(stopper)
    qp.set_default_op(xapian.Query.OP_OR)
    qp.set_database(db)
    return qp


def time_queries(run, queries):
    latencies = []
    results = 0
    start = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        results += run(q)
        latencies.append((time.perf_counter() - t) * 1000)
    total = time.perf_counter() - start
    latencies.sort()

    def at(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))]

    return {
        "queries": len(queries),
        "qps": len(queries) / total,
        "p50Ms": at(0.5),
        "p99Ms": at(0.99),
        "meanResults": results / len(queries),
    }


def dir_bytes(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    return total


def bench(argv):
    backend, corpus_path, queries_path, db_dir, k1, b, stopwords_path = argv[:7]
    limit = int(argv[7]) if len(argv) > 7 else None
    k1 = float(k1)
    b = float(b)
    stemmer, stopper = analysis(stopwords_path)
    with open(queries_path) as f:
        queries = json.load(f)
    gc.collect()
    baseline = rss_mb()

    if backend == "inmemory":
        db = xapian.WritableDatabase("", xapian.DB_BACKEND_INMEMORY)
    elif backend == "glass":
        shutil.rmtree(db_dir, ignore_errors=True)
        db = xapian.WritableDatabase(db_dir, xapian.DB_CREATE_OR_OVERWRITE | xapian.DB_BACKEND_GLASS)
    else:
        raise SystemExit("backend must be inmemory or glass")
    tg = term_generator(stemmer, stopper)
    documents = 0
    build_start = time.perf_counter()
    with open(corpus_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            if limit is not None and documents >= limit:
                break
            d = json.loads(line)
            doc = xapian.Document()
            tg.set_document(doc)
            tg.index_text(d["title"], 2)
            tg.increase_termpos()
            tg.index_text(d["text"])
            tg.increase_termpos()
            tg.index_text(url_words(d["url"]))
            # Title and URL as the document data (what a result list shows); the text in a value
            # slot, read only for snippets, as Periscope keeps its text apart from the ranking data.
            doc.set_data(json.dumps([d["url"], d["title"]]))
            doc.add_value(0, d["text"])
            db.add_document(doc)
            documents += 1
    db.commit()
    build_ms = (time.perf_counter() - build_start) * 1000
    gc.collect()
    built_rss = rss_mb()

    if backend == "glass":
        index_bytes = dir_bytes(db_dir)
        # Opening the files as a server would: a read-only handle on the database directory.
        load_start = time.perf_counter()
        searcher = xapian.Database(db_dir)
        load_ms = (time.perf_counter() - load_start) * 1000
    else:
        index_bytes = 0
        load_ms = 0.0
        searcher = db

    qp = query_parser(searcher, stemmer, stopper)
    enquire = xapian.Enquire(searcher)
    enquire.set_weighting_scheme(xapian.BM25Weight(k1, 0, 1, b, 0.5))

    def search(text, snippets):
        enquire.set_query(qp.parse_query(text))
        mset = enquire.get_mset(0, 10)
        n = 0
        for match in mset:
            document = match.document
            url, title = json.loads(document.get_data())
            if snippets:
                mset.snippet(document.get_value(0).decode("utf-8"), 300, stemmer)
            n += 1
        return n

    both = queries["andLike"] + queries["orLike"]
    for q in both:
        search(q, True)  # warm-up
    figures = {
        "engine": "Xapian 1.4 " + ("in-memory" if backend == "inmemory" else "glass"),
        "documents": documents,
        "buildMs": build_ms,
        "heapMB": None,
        "buffersMB": None,
        "rssMB": built_rss,
        "baselineHeapMB": None,
        "baselineRssMB": baseline,
        "snapshotMB": index_bytes / 1e6 if backend == "glass" else None,
        "saveMs": 0,
        "loadMs": load_ms if backend == "glass" else None,
        "andLike": time_queries(lambda q: search(q, True), queries["andLike"]),
        "orLike": time_queries(lambda q: search(q, True), queries["orLike"]),
        "andLikeBare": time_queries(lambda q: search(q, False), queries["andLike"]),
        "orLikeBare": time_queries(lambda q: search(q, False), queries["orLike"]),
    }
    print(json.dumps(figures), flush=True)


def rank(argv):
    docs_path, queries_path, k1, b, title_weight, stopwords_path, depth = argv[:7]
    options = dict(arg.split("=", 1) for arg in argv[7:])
    feedback = tuple(int(x) for x in options["expand"].split(":")) if "expand" in options else None
    spelling_dir = options.get("spelling")
    stemmer, stopper = analysis(stopwords_path)
    title_weight = int(title_weight)
    if spelling_dir is None:
        db = xapian.WritableDatabase("", xapian.DB_BACKEND_INMEMORY)
    else:
        shutil.rmtree(spelling_dir, ignore_errors=True)
        db = xapian.WritableDatabase(spelling_dir, xapian.DB_CREATE_OR_OVERWRITE | xapian.DB_BACKEND_GLASS)
    tg = term_generator(stemmer, stopper)
    if spelling_dir is not None:
        tg.set_database(db)
        tg.set_flags(xapian.TermGenerator.FLAG_SPELLING)
        tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
    with open(docs_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            doc = xapian.Document()
            tg.set_document(doc)
            if title_weight > 0:
                tg.index_text(d["title"], title_weight)
                tg.increase_termpos()
            tg.index_text(d["text"])
            doc.set_data(d["id"])
            db.add_document(doc)
    if spelling_dir is not None:
        db.commit()
    qp = query_parser(db, stemmer, stopper)
    if spelling_dir is not None:
        qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight(float(k1), 0, 1, float(b), 0.5))
    with open(queries_path) as f:
        queries = json.load(f)
    flags = xapian.QueryParser.FLAG_DEFAULT | (xapian.QueryParser.FLAG_SPELLING_CORRECTION if spelling_dir is not None else 0)
    out = {}
    for q in queries:
        query = qp.parse_query(q["text"], flags)
        corrected = qp.get_corrected_query_string() if spelling_dir is not None else b""
        if corrected:
            query = qp.parse_query(corrected, flags)
        enquire.set_query(query)
        if feedback is not None:
            fb_docs, fb_terms = feedback
            rset = xapian.RSet()
            for m in enquire.get_mset(0, fb_docs):
                rset.add_document(m.docid)
            if not rset.empty():
                terms = [item.term for item in enquire.get_eset(fb_terms, rset)]
                if terms:
                    enquire.set_query(xapian.Query(xapian.Query.OP_OR, query, xapian.Query(xapian.Query.OP_OR, terms)))
        out[q["id"]] = [m.document.get_data().decode() for m in enquire.get_mset(0, int(depth))]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "bench":
        bench(sys.argv[2:])
    elif mode == "rank":
        rank(sys.argv[2:])
    else:
        raise SystemExit(__doc__)
