"""The memory group: a key/value store kept in the server process.

The memory tools really work (store, read back, search, delete, back up...), so
that a client can check that a call reached the server and had its effect.
Entries never expire on their own: ``ttl`` is recorded, not enforced, which
keeps results deterministic.
"""

from __future__ import annotations

import copy
import fnmatch
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from ._schema import ANY_VALUE, FORMAT, LIMIT, NAMESPACE, TAGS, ToolDef, arr, b, e, i, obj, s, tool, uri

t = partial(tool, "memory")
KEY = s("Key of the entry inside its namespace", minLength=1, maxLength=256)

TOOLS: list[ToolDef] = [
    t(
        "memory_store",
        "Store a value in persistent memory under a key, optionally in a namespace, with tags and a "
        "time-to-live. An existing value under the same key is overwritten.",
        key=KEY,
        value={**ANY_VALUE, "description": "Value to store: text, number, object or array"},
        namespace=NAMESPACE,
        ttl=i("Seconds until the entry expires; 0 keeps it forever", default=0, minimum=0),
        tags=TAGS,
        required=("key", "value"),
    ),
    t(
        "memory_retrieve",
        "Retrieve the value stored in memory under a key, with its tags and time-to-live.",
        key=KEY,
        namespace=NAMESPACE,
        required=("key",),
    ),
    t(
        "memory_search",
        "Search memory entries whose key or value matches a text or glob pattern, newest first, "
        "optionally filtered by tags.",
        pattern=s("Text to look for, or a glob such as 'user:*'", minLength=1),
        namespace=NAMESPACE,
        tags=TAGS,
        limit=LIMIT,
        include_values=b("Return the values, not just the keys", True),
        required=("pattern",),
    ),
    t(
        "memory_delete",
        "Delete the memory entry stored under a key. The value cannot be recovered unless a backup exists.",
        key=KEY,
        namespace=NAMESPACE,
        required=("key",),
    ),
    t(
        "memory_list",
        "List the keys stored in a memory namespace, optionally only those with a prefix.",
        namespace=NAMESPACE,
        prefix=s("Only keys starting with this text", default=""),
        limit=LIMIT,
    ),
    t(
        "memory_usage",
        "Report memory usage: number of entries and approximate size in bytes per namespace.",
        namespace=s("Only this namespace; all namespaces when omitted"),
    ),
    t(
        "memory_clear",
        "Remove every entry of a memory namespace at once.",
        namespace=NAMESPACE,
        confirm=b("Must be true: clearing cannot be undone"),
        required=("confirm",),
    ),
    t(
        "memory_export",
        "Export all entries of a memory namespace as one document, for reading or archiving.",
        namespace=NAMESPACE,
        format=FORMAT,
    ),
    t(
        "memory_import",
        "Import entries into a memory namespace from a list of key/value pairs, merging with or "
        "replacing what is there.",
        namespace=NAMESPACE,
        entries=arr(
            "Entries to import",
            obj("One entry", ("key", "value"), key=KEY, value={**ANY_VALUE, "description": "Value"}),
        ),
        mode=e("How to treat keys that already exist", "merge replace skip"),
        required=("entries",),
    ),
    t(
        "memory_backup",
        "Take a named point-in-time backup of all memory namespaces that memory_restore can bring back later.",
        name=s("Name of the backup", pattern="^[a-z0-9_-]+$", maxLength=64),
        required=("name",),
    ),
    t(
        "memory_restore",
        "Restore memory from a named backup taken by memory_backup, replacing every current entry.",
        name=s("Name of the backup to restore", pattern="^[a-z0-9_-]+$"),
        required=("name",),
    ),
    t(
        "memory_tag",
        "Add tags to, or remove tags from, an existing memory entry.",
        key=KEY,
        namespace=NAMESPACE,
        add=TAGS,
        remove=TAGS,
        required=("key",),
    ),
    t(
        "memory_namespace",
        "Manage memory namespaces: list them, create one, or drop one with all its entries.",
        action=e("What to do", "list create drop"),
        namespace=NAMESPACE,
        destructive=True,
    ),
    t(
        "memory_compress",
        "Compress large values in a memory namespace to reduce its footprint; values are "
        "decompressed transparently when read.",
        namespace=NAMESPACE,
        threshold=i("Only values larger than this many bytes", default=1024, minimum=64),
        algorithm=e("Compression algorithm", "zstd gzip lz4"),
    ),
    t(
        "memory_sync",
        "Synchronize a memory namespace with a remote memory store so that other swarm instances see the same entries.",
        namespace=NAMESPACE,
        remote=uri("Base URL of the remote memory store"),
        direction=e("Which way entries flow", "both push pull"),
        required=("remote",),
    ),
    t(
        "memory_persist",
        "Flush memory entries to durable storage so that they survive a restart of the server.",
        namespace=NAMESPACE,
        path=s("Directory for the persisted files", default=".swarm/memory"),
    ),
    t(
        "memory_analytics",
        "Analyze memory access patterns: most read keys, hit and miss rates, growth of each namespace over time.",
        namespace=NAMESPACE,
        top=i("How many keys to list", default=10, minimum=1),
    ),
    t(
        "memory_ttl",
        "Set or change the time-to-live of an existing memory entry.",
        key=KEY,
        namespace=NAMESPACE,
        ttl=i("Seconds until the entry expires; 0 keeps it forever", minimum=0),
        required=("key", "ttl"),
    ),
]


class MemoryStore:
    """The in-process store behind the memory tools; every method returns a JSON-ready dict."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, dict[str, Any]]] = {}
        self._backups: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self._clock = 0  # a counter, not wall time: results stay deterministic

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        """The tools this store implements, by tool name."""
        return {
            "memory_store": self.store,
            "memory_retrieve": self.retrieve,
            "memory_search": self.search,
            "memory_delete": self.delete,
            "memory_list": self.list,
            "memory_usage": self.usage,
            "memory_clear": self.clear,
            "memory_export": self.export,
            "memory_import": self.import_,
            "memory_backup": self.backup,
            "memory_restore": self.restore,
            "memory_tag": self.tag,
            "memory_ttl": self.ttl,
        }

    def _space(self, args: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return self._entries.setdefault(args.get("namespace", "default"), {})

    def _put(self, space: dict[str, dict[str, Any]], key: str, value: Any, tags: list[str], ttl: int) -> None:
        self._clock += 1
        space[key] = {"value": value, "tags": sorted(set(tags)), "ttl": ttl, "version": self._clock}

    def store(self, args: dict[str, Any]) -> dict[str, Any]:
        space = self._space(args)
        replaced = args["key"] in space
        self._put(space, args["key"], args["value"], args.get("tags", []), args.get("ttl", 0))
        return {"stored": True, "key": args["key"], "namespace": args.get("namespace", "default"), "replaced": replaced}

    def retrieve(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._space(args).get(args["key"])
        if entry is None:
            return {"found": False, "key": args["key"]}
        return {"found": True, "key": args["key"], **entry}

    def search(self, args: dict[str, Any]) -> dict[str, Any]:
        pattern, wanted = args["pattern"], set(args.get("tags", []))
        matches = []
        for key, entry in self._space(args).items():
            text = json.dumps(entry["value"])
            hit = fnmatch.fnmatchcase(key, pattern) or pattern in key or pattern in text
            if hit and wanted <= set(entry["tags"]):
                matches.append((entry["version"], key, entry))
        matches.sort(reverse=True)
        found = [
            {"key": k, **({"value": v["value"]} if args.get("include_values", True) else {})}
            for _, k, v in matches[: args.get("limit", 20)]
        ]
        return {"count": len(found), "results": found}

    def delete(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"deleted": self._space(args).pop(args["key"], None) is not None, "key": args["key"]}

    def list(self, args: dict[str, Any]) -> dict[str, Any]:
        keys = sorted(k for k in self._space(args) if k.startswith(args.get("prefix", "")))
        return {"keys": keys[: args.get("limit", 20)], "total": len(keys)}

    def usage(self, args: dict[str, Any]) -> dict[str, Any]:
        names = [args["namespace"]] if "namespace" in args else sorted(self._entries)
        return {
            name: {"entries": len(self._entries.get(name, {})), "bytes": len(json.dumps(self._entries.get(name, {})))}
            for name in names
        }

    def clear(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args["confirm"]:
            return {"cleared": 0, "reason": "confirm must be true"}
        space = self._space(args)
        count = len(space)
        space.clear()
        return {"cleared": count}

    def export(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"namespace": args.get("namespace", "default"), "entries": copy.deepcopy(self._space(args))}

    def import_(self, args: dict[str, Any]) -> dict[str, Any]:
        space, mode = self._space(args), args.get("mode", "merge")
        if mode == "replace":
            space.clear()
        imported = 0
        for item in args["entries"]:
            if mode == "skip" and item["key"] in space:
                continue
            self._put(space, item["key"], item["value"], [], 0)
            imported += 1
        return {"imported": imported}

    def backup(self, args: dict[str, Any]) -> dict[str, Any]:
        self._backups[args["name"]] = copy.deepcopy(self._entries)
        return {"backup": args["name"], "namespaces": len(self._entries)}

    def restore(self, args: dict[str, Any]) -> dict[str, Any]:
        if args["name"] not in self._backups:
            return {"restored": False, "reason": f"no backup named {args['name']!r}"}
        self._entries = copy.deepcopy(self._backups[args["name"]])
        return {"restored": True, "namespaces": len(self._entries)}

    def tag(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._space(args).get(args["key"])
        if entry is None:
            return {"found": False, "key": args["key"]}
        entry["tags"] = sorted((set(entry["tags"]) | set(args.get("add", []))) - set(args.get("remove", [])))
        return {"found": True, "key": args["key"], "tags": entry["tags"]}

    def ttl(self, args: dict[str, Any]) -> dict[str, Any]:
        entry = self._space(args).get(args["key"])
        if entry is not None:
            entry["ttl"] = args["ttl"]
        return {"found": entry is not None, "key": args["key"], "ttl": args["ttl"]}
