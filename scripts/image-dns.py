#!/usr/bin/env python3
"""A DNS server for one name, for `scripts/image.sh --check` (standard library only).

    image-dns.py ADDRESS NAME IPV4

Answers UDP queries on ADDRESS:53: an A query for NAME with IPV4, any other type for NAME with
no record, any other name with NXDOMAIN (so a resolver walks its search list, as in a Pod).
Prints "ready" once bound, then serves until killed. It lets the check show that the static
binary resolves a name over DNS with only /etc/resolv.conf in its root filesystem (no
/etc/nsswitch.conf, no NSS libraries).
"""

import socket
import struct
import sys


def question(query):
    """The question's name (lower case), type, and where the question ends."""
    labels, i = [], 12
    while query[i]:
        labels.append(query[i + 1 : i + 1 + query[i]].decode("ascii", "replace"))
        i += query[i] + 1
    qtype = struct.unpack_from(">H", query, i + 1)[0]
    return ".".join(labels).lower(), qtype, i + 5


def answer(query, name, ipv4):
    tid, flags, qdcount = struct.unpack_from(">HHH", query, 0)
    if qdcount != 1:
        return None
    qname, qtype, end = question(query)
    rd = flags & 0x0100
    records = b""
    if qname != name:
        rcode, count = 3, 0  # NXDOMAIN
    elif qtype == 1:
        rcode, count = 0, 1
        records = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 30, 4) + socket.inet_aton(ipv4)
    else:
        rcode, count = 0, 0
    flags = 0x8000 | 0x0400 | rd | 0x0080 | rcode  # response, authoritative, RD copied, RA
    return struct.pack(">HHHHHH", tid, flags, 1, count, 0, 0) + query[12:end] + records


def main():
    address, name, ipv4 = sys.argv[1], sys.argv[2].lower().rstrip("."), sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((address, 53))
    print("ready", flush=True)
    while True:
        query, peer = s.recvfrom(512)
        try:
            reply = answer(query, name, ipv4)
        except (IndexError, struct.error, UnicodeError):
            reply = None
        if reply:
            s.sendto(reply, peer)


if __name__ == "__main__":
    main()
