#!/usr/bin/env python3
"""Read booking-events as a team that does not read Go would: with a PyPI Kafka client and the JSON
Schemas of events/schema, nothing else of golf-crawler.

Reads every partition of the topic from the beginning to the end offsets it finds at start,
validates each message value against the schema of its event_type (JSON Schema 2020-12), checks the
CloudEvents headers (ce_id, ce_type) against the body when present, deduplicates by ce_id (event_id
when a message has no CloudEvents headers: delivery is at least once), and prints one JSON object:
messages, cloudevents (messages with ce_specversion 1.0), duplicates, invalid, events (distinct), by_type (distinct events per event_type) and
listing_keys (distinct). Exits 1 if a message was invalid.

    "$(compose/dev/pyenv)" compose/dev/consume-events.py --bootstrap 127.0.0.1:19092 --topic booking-events
"""
import argparse
import json
import pathlib
import sys
import uuid

import jsonschema
from confluent_kafka import Consumer, KafkaError, TopicPartition

SCHEMAS = pathlib.Path(__file__).resolve().parents[2] / "events" / "schema"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bootstrap", default="127.0.0.1:19092")
    ap.add_argument("--topic", default="booking-events")
    ap.add_argument("--schemas", default=str(SCHEMAS), help="folder of <event_type>.json schemas")
    args = ap.parse_args()

    validators = {}
    for path in sorted(pathlib.Path(args.schemas).glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[path.stem] = jsonschema.Draft202012Validator(schema)

    c = Consumer({"bootstrap.servers": args.bootstrap, "group.id": "consume-events-py",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    meta = c.list_topics(args.topic, timeout=10).topics[args.topic]
    if meta.error is not None:
        sys.exit(f"topic {args.topic}: {meta.error}")
    todo = {}
    parts = []
    for p in sorted(meta.partitions):
        low, high = c.get_watermark_offsets(TopicPartition(args.topic, p), timeout=10)
        if high > low:
            todo[p] = high
            parts.append(TopicPartition(args.topic, p, low))
    c.assign(parts)

    seen, types, keys = set(), {}, set()
    messages = duplicates = invalid = cloudevents = 0
    while todo:
        m = c.poll(10)
        if m is None:
            sys.exit(f"no message for 10 s with partitions {sorted(todo)} unfinished")
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                continue
            sys.exit(f"kafka: {m.error()}")
        if m.partition() in todo and m.offset() + 1 >= todo[m.partition()]:
            del todo[m.partition()]
        messages += 1
        where = f"{m.topic()}/{m.partition()}/{m.offset()}"
        headers = {k: v.decode("utf-8", "replace") for k, v in (m.headers() or [])}
        cloudevents += headers.get("ce_specversion") == "1.0"
        try:
            ev = json.loads(m.value())
            validators[ev.get("event_type")].validate(ev)
            if "ce_id" in headers and uuid.UUID(headers["ce_id"]) != uuid.UUID(ev["event_id"]):
                raise ValueError(f"ce_id {headers['ce_id']} is not event_id {ev['event_id']}")
            if "ce_type" in headers and headers["ce_type"] != f"com.github.golfcrawler.{ev['event_type']}.v{ev['schema_version']}":
                raise ValueError(f"ce_type {headers['ce_type']} for a {ev['event_type']}")
        except (ValueError, KeyError, TypeError, jsonschema.ValidationError) as err:
            invalid += 1
            print(f"{where}: invalid: {str(err).splitlines()[0]}", file=sys.stderr)
            continue
        eid = str(uuid.UUID(headers.get("ce_id", ev["event_id"])))
        if eid in seen:
            duplicates += 1
            continue
        seen.add(eid)
        types[ev["event_type"]] = types.get(ev["event_type"], 0) + 1
        keys.add(m.key().decode("utf-8"))
    c.close()
    print(json.dumps({"messages": messages, "cloudevents": cloudevents, "duplicates": duplicates, "invalid": invalid, "events": len(seen),
                      "by_type": dict(sorted(types.items())), "listing_keys": len(keys)}))
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
