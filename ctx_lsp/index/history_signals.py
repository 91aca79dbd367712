"""What the repository's history says about a task's files (issue 22, item 4): files that
changed together with the seeds (the working files, else the best lexical hits), files
that changed lately, and commits whose messages match the task, pointing at the files
they touched.

Built once per `History` (`git_history.py`) and asked per request: a request costs a pass
over the seeds' commits and the postings of the task's terms. Everything is keyed by
absolute path, as the rest of a bundle is.
"""

from __future__ import annotations

import math
import os
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from ctx_lsp.index.git_history import Commit, History
from ctx_lsp.index.terms import query_terms, terms
from ctx_lsp.relevance import (
    BM25_B,
    BM25_K1,
    HISTORY_CO_CHANGE_SHARE,
    HISTORY_CO_CHANGE_SMOOTHING,
    HISTORY_MESSAGE_COMMITS,
    HISTORY_MESSAGE_SHARE,
    HISTORY_MIN_SCORE,
    HISTORY_RECENCY_HALF_LIFE_COMMITS,
    HISTORY_RECENCY_SHARE,
)


@dataclass(frozen=True, slots=True)
class HistoryScore:
    score: float
    """In [0, 1]: the blend of co-change, message matches and recency."""
    reason: str
    """What history says about the file, for the bundle's explanation."""


def size_damping(paths: int) -> float:
    """A commit's weight as evidence that its files belong together: a two-file commit is
    strong evidence, a thirty-file one weak (1/sqrt of the other files)."""
    return 1.0 / math.sqrt(max(1, paths - 1))


class HistorySignals:
    """Co-change, recency and commit-message search over one read of the history."""

    def __init__(self, history: History, root: str) -> None:
        self.history = history
        self.root = root
        self._commits: list[Commit] = [c for c in history.commits if c.paths and not c.bulk]
        self._by_file: dict[str, list[int]] = defaultdict(list)
        for i, commit in enumerate(self._commits):
            for path in commit.paths:
                self._by_file[self._abs(path)].append(i)
        self._recency: dict[str, float] = {}
        decay = 0.5 ** (1 / HISTORY_RECENCY_HALF_LIFE_COMMITS)
        for age, commit in enumerate(history.commits):
            for path in commit.paths:
                self._recency.setdefault(self._abs(path), decay**age)
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._lengths: list[int] = []
        for i, commit in enumerate(self._commits):
            counts = Counter(terms(commit.message))
            self._lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                self._postings[term].append((i, tf))
        self._mean_length = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0

    def __bool__(self) -> bool:
        return bool(self._commits)

    def _abs(self, path: str) -> str:
        return os.path.join(self.root, path)

    def recency(self, abs_path: str) -> float:
        """1 for a file the newest commit changed, halving every half-life of commits; 0
        for one the history read never changed."""
        return self._recency.get(abs_path, 0.0)

    def co_changed(self, seeds: Mapping[str, float]) -> dict[str, tuple[float, str]]:
        """Files that changed with the seeds (abs path → weight in [0, 1]): per seed, the
        share of its commits that also changed the file (an association rule's
        confidence), each commit damped by its size, smoothed so that a seed seen in one
        commit is no proof. Returns abs path → (score in [0, 1], the seed that gave most)."""
        scores: dict[str, float] = defaultdict(float)
        best: dict[str, tuple[float, str]] = {}
        for seed, weight in seeds.items():
            touching = self._by_file.get(seed)
            if not touching:
                continue
            denominator = len(touching) + HISTORY_CO_CHANGE_SMOOTHING
            gained: dict[str, float] = defaultdict(float)
            for i in touching:
                commit = self._commits[i]
                damping = size_damping(len(commit.paths))
                for path in commit.paths:
                    gained[self._abs(path)] += damping / denominator
            for path, gain in gained.items():
                if path in seeds:
                    continue
                scores[path] += weight * gain
                if gain * weight > best.get(path, (0.0, ""))[0]:
                    best[path] = (gain * weight, seed)
        return {p: (min(1.0, s), best[p][1]) for p, s in scores.items()}

    def message_matches(self, query: str) -> dict[str, tuple[float, Commit]]:
        """Files the commits best matching the task's words changed (BM25 over commit
        messages), each commit's score spread over its files damped by its size. Returns
        abs path → (score in [0, 1], the best commit that changed it)."""
        n = len(self._commits)
        commit_scores: dict[int, float] = defaultdict(float)
        for term in query_terms(query):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for i, tf in postings:
                norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[i] / self._mean_length)
                commit_scores[i] += idf * tf * (BM25_K1 + 1) / (tf + norm)
        top = sorted(commit_scores.items(), key=lambda kv: -kv[1])[:HISTORY_MESSAGE_COMMITS]
        if not top:
            return {}
        best_score = top[0][1]
        files: dict[str, tuple[float, Commit]] = {}
        for i, score in top:
            commit = self._commits[i]
            gain = score / best_score * size_damping(len(commit.paths))
            for path in commit.paths:
                abs_path = self._abs(path)
                old, first = files.get(abs_path, (0.0, commit))
                files[abs_path] = (old + gain, first)
        top_file = max(s for s, _ in files.values())
        return {p: (s / top_file, c) for p, (s, c) in files.items()}

    def prior(self, query: str, seeds: Mapping[str, float], known: frozenset[str]) -> dict[str, HistoryScore]:
        """abs path → what history adds to a file's salience, for the files it says
        something about: co-change with the seeds and message matches for any file,
        recency only for the `known` ones (files the task's words already found): alone,
        "changed lately" says nothing about this task."""
        if not self._commits:
            return {}
        co = self.co_changed(seeds)
        messages = self.message_matches(query) if query.strip() else {}
        out: dict[str, HistoryScore] = {}
        for path in {*co, *messages, *known}:
            co_score, seed = co.get(path, (0.0, ""))
            message_score, commit = messages.get(path, (0.0, None))
            recency = self.recency(path) if path in known else 0.0
            score = (
                HISTORY_CO_CHANGE_SHARE * co_score
                + HISTORY_MESSAGE_SHARE * message_score
                + HISTORY_RECENCY_SHARE * recency
            )
            if score < HISTORY_MIN_SCORE:
                continue
            parts = []
            if co_score * HISTORY_CO_CHANGE_SHARE >= HISTORY_MIN_SCORE:
                parts.append(f"changed together with {os.path.relpath(seed, self.root)}")
            if commit is not None and message_score * HISTORY_MESSAGE_SHARE >= HISTORY_MIN_SCORE:
                subject = commit.message.strip().splitlines()[0][:60] if commit.message.strip() else ""
                parts.append(f"changed by commit {commit.sha[:8]} {subject!r}")
            if recency * HISTORY_RECENCY_SHARE >= HISTORY_MIN_SCORE:
                parts.append("changed recently")
            out[path] = HistoryScore(min(1.0, score), "history: " + "; ".join(parts or ["changed recently"]))
        return out
