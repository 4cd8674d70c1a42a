#!/usr/bin/env python3
"""Lists the network requests a file:// page made, from a Chromium net log (--log-net-log):
requests whose network isolation key is the file:// page, for any URL that is not a file. The
browser's own background requests (updates, accounts) have other keys and are left out.

    netlog.py NETLOG.json      # prints one URL a line; exits 1 when there is any"""
import json
import sys

events = json.load(open(sys.argv[1]))["events"]
urls = sorted({
    e["params"]["url"]
    for e in events
    if "url" in e.get("params", {})
    and e["params"].get("network_isolation_key", "").startswith("file://")
    and not e["params"]["url"].startswith(("file:", "data:"))
})
for u in urls:
    print(u)
sys.exit(1 if urls else 0)
