#!/usr/bin/env python3
"""Copies a stream (doc/stream.md), adding a second device named NAME after
its first DEVICE block and moving every interval that its QUEUES blocks name
onto that device, each block's checksum made again. The simulated device
names every device alike; this gives a test a row whose intervals ran on two
devices.

Usage: second_device.py IN OUT NAME
"""
import struct
import sys
import zlib

HEADER = 64
DEVICE, QUEUES = 3, 6


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7


def put_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def block(kind, payload):
    head = struct.pack("<II", kind, len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload))


def moved_queues(payload, device_ref):
    """A QUEUES payload whose entries all name device_ref."""
    count, at = varint(payload, 0)
    out = bytearray(put_varint(count))
    for _ in range(count):
        instance, at = varint(payload, at)
        _, at = varint(payload, at)
        queue, at = varint(payload, at)
        out += put_varint(instance) + put_varint(device_ref) + put_varint(queue)
    if at != len(payload):
        sys.exit("second_device.py: a QUEUES block holds more than its entries")
    return bytes(out)


def main():
    source, target, name = sys.argv[1], sys.argv[2], sys.argv[3].encode()
    data = open(source, "rb").read()
    out, at, devices, added, moved = bytearray(data[:HEADER]), HEADER, 0, None, 0
    while at < len(data):
        kind, length = struct.unpack_from("<II", data, at)
        payload = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == QUEUES and added is not None:
            out += block(kind, moved_queues(payload, added + 1))
            moved += 1
            continue
        out += block(kind, payload)
        if kind == DEVICE:
            devices += 1
            if added is None:   # the new device, after the first
                added = struct.unpack_from("<I", payload, 0)[0] + 1
                out += block(DEVICE, struct.pack("<IH", added, len(name)) + name)
    if devices != 1 or not moved:
        sys.exit(f"second_device.py: want one device and a QUEUES block, "
                 f"found {devices} and {moved}")
    open(target, "wb").write(out)


if __name__ == "__main__":
    main()
