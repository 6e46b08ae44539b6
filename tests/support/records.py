"""Host side: journal records as storage/journal.py writes them (docs/persistence.md), written
out independently of the firmware for the tests that read or forge a journal (test_journal.py,
test_registry.py)."""


def crc16(data):
    """CRC-16/CCITT-FALSE."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def journal_record(t, payload=b""):
    """One record: type, length, payload, then the CRC over those, little-endian."""
    body = bytes([t, len(payload)]) + payload
    c = crc16(body)
    return body + bytes([c & 0xFF, c >> 8])
