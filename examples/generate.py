#!/usr/bin/env python3
"""Generates examples/events.jsonl: realistic agent-memory events for engram.

Deterministic (fixed seed): re-running it reproduces the committed file.
Five users, each with the kinds of memories agents actually store
(preferences, facts, episodes, procedures, mistakes), plus what consolidation
exists for: paraphrased duplicates, contradictions, changes over time and
recurring episodes. Reads of memories follow a skewed (Zipf-like) pattern, a
few consolidation requests are interleaved, and a handful of deliberately
broken lines show the dead-letter path.

Usage: python3 examples/generate.py > examples/events.jsonl
"""

import json
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone

SEED = 20261122
START = datetime(2026, 9, 1, 8, 0, tzinfo=timezone.utc)
DAYS = 60
NAMESPACE = uuid.UUID("0b6f3c1e-5d2a-4e8f-9a7b-2c4d6e8f0a1b")

USERS = {
    "alice": {
        "project": "atlas",
        "service": "billing-api",
        "language": "Rust",
        "editor": "Helix",
        "db_old": "MySQL",
        "db_new": "PostgreSQL",
        "vector_old": "Pinecone",
        "vector_new": "pgvector on PostgreSQL",
        "ci": "GitHub Actions",
        "city": "Lisbon",
        "new_city": "Porto",
    },
    "bob": {
        "project": "harbor",
        "service": "ingest-worker",
        "language": "Go",
        "editor": "Neovim",
        "db_old": "MongoDB",
        "db_new": "ScyllaDB",
        "vector_old": "Weaviate",
        "vector_new": "Qdrant",
        "ci": "GitLab CI",
        "city": "Toronto",
        "new_city": "Montreal",
    },
    "carol": {
        "project": "lumen",
        "service": "search-frontend",
        "language": "TypeScript",
        "editor": "VS Code",
        "db_old": "SQLite",
        "db_new": "PostgreSQL",
        "vector_old": "FAISS files on disk",
        "vector_new": "pgvector on PostgreSQL",
        "ci": "CircleCI",
        "city": "Berlin",
        "new_city": "Hamburg",
    },
    "dmitri": {
        "project": "orbit",
        "service": "telemetry-gateway",
        "language": "Python",
        "editor": "PyCharm",
        "db_old": "InfluxDB",
        "db_new": "TimescaleDB",
        "vector_old": "Chroma",
        "vector_new": "Milvus",
        "ci": "Jenkins",
        "city": "Tallinn",
        "new_city": "Tartu",
    },
    "emi": {
        "project": "kite",
        "service": "mobile-backend",
        "language": "Kotlin",
        "editor": "IntelliJ IDEA",
        "db_old": "Firebase",
        "db_new": "PostgreSQL",
        "vector_old": "Elasticsearch kNN",
        "vector_new": "OpenSearch kNN",
        "ci": "Bitrise",
        "city": "Osaka",
        "new_city": "Kyoto",
    },
}

PREFERENCES = [
    ("The user prefers {language} for new services.",
     "For new services the user would rather use {language}."),
    ("The user edits code in {editor}.",
     "{editor} is the user's editor of choice."),
    ("The user wants answers with code examples first and explanations after.",
     "User likes to see the code example before the explanation."),
    ("The user prefers short commit messages in the imperative mood.",
     "Commit messages should be short and imperative, the user says."),
    ("The user dislikes tabs and always indents with four spaces.",
     "User indents with 4 spaces and dislikes tab characters."),
    ("The user prefers dark mode in every tool.",),
    ("The user likes metric units in reports.",),
    ("The user prefers meetings before noon in {city} time.",
     "Schedule the user's meetings in the morning, {city} time."),
]

FACTS = [
    ("Project {project} is deployed with {ci}.",
     "{ci} builds and deploys project {project}."),
    ("The {service} service listens on port 8443.",),
    ("The user works from {city}.", "The user is based in {city}."),
    ("Project {project} has a staging environment refreshed nightly.",),
    ("The {service} service has a p99 latency budget of 200 ms.",
     "Latency budget for {service}: 200 ms at p99."),
    ("The on-call rotation for {project} changes every Monday.",),
    ("Project {project} stores secrets in Vault.",),
    ("The API of {service} is RESTful.", "The {service} API uses REST."),
]

PROCEDURES = [
    "To release {service}: tag the commit, wait for {ci} to build the image, then run the deploy job.",
    "To rotate the database password for {project}: create the new user, update Vault, restart {service}, drop the old user.",
    "To reproduce a flaky test in {project}: run it 50 times with a fixed seed and collect the logs.",
    "To add a new endpoint to {service}: write the handler, add the route, add an integration test, update the OpenAPI file.",
    "To onboard a teammate to {project}: grant repository access, share the runbook, pair on the first deploy.",
]

MISTAKES = [
    "Deploying {service} without running the migrations first broke production; always run migrations before deploying.",
    "Forgot to pin the {language} toolchain version and the build broke; pin toolchain versions in CI.",
    "Logged request bodies in {service}, which leaked personal data; never log request bodies.",
    "Assumed timestamps in {project} were local time; they are UTC, convert explicitly.",
]

EPISODE_TEMPLATES = [
    "Ran the full test suite before committing the {feature} change.",
    "Ran all tests before the commit for {feature}; they passed.",
    "Before committing {feature}, ran the test suite locally.",
    "Executed the tests prior to committing the {feature} work.",
    "Ran tests before committing; the {feature} change was green.",
]
OTHER_EPISODES = [
    "Debugged a timeout in {service} caused by a missing index.",
    "Paired with a teammate on the {feature} design review.",
    "Reviewed a pull request that touched the {feature} code.",
    "Investigated an alert from {service} about memory growth.",
    "Wrote the runbook section about {feature}.",
    "Answered a question about {feature} in the team channel.",
]
# An early chore, done on four days and never read again: consolidation
# founds a pattern on it, and its episodes fade (the archive takes them once
# unread for `max_age` and faded below `archive_threshold`, which takes longer
# than the sample's 60 days at these importances).
CHORE_TEMPLATES = [
    "Renewed the TLS certificate of {service} before it expired.",
    "Renewed the {service} TLS certificate ahead of its expiry date.",
    "TLS certificate for {service} renewed again before expiry.",
    "Renewed the expiring TLS certificate on {service}.",
]
FEATURES = ["pagination", "rate limiting", "audit log", "retry policy", "billing export",
            "search ranking", "login flow", "webhook delivery", "cache warmup", "schema migration"]


def ts(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Generator:
    def __init__(self):
        self.rng = random.Random(SEED)
        self.events = []  # (time, sequence, record)
        self.sequence = 0

    def add(self, moment, record):
        self.sequence += 1
        record.setdefault("event_id", str(uuid.uuid5(NAMESPACE, f"{self.sequence}")))
        self.events.append((moment, self.sequence, record))

    def moment(self, day_from=0, day_to=DAYS - 1):
        day = self.rng.randint(day_from, day_to)
        return START + timedelta(days=day, minutes=self.rng.randint(0, 10 * 60))

    def memory(self, user, kind, content, category, tags, moment, importance=None):
        memory_id = str(uuid.uuid5(NAMESPACE, f"{user}/{self.sequence}/{content}"))
        record = {
            "type": "memory.created",
            "user_id": user,
            "memory_id": memory_id,
            "kind": kind,
            "content": content,
            "created_at": ts(moment),
            "category": category,
            "tags": tags,
            "importance": round(importance if importance is not None else self.rng.uniform(0.2, 0.9), 2),
            "source": self.rng.choice(["chat", "run-summary", "tool-output"]),
        }
        self.add(moment, record)
        return memory_id, moment

    def user_memories(self, user, facts):
        made = []
        fill = lambda text: text.format(**facts)
        for variants in PREFERENCES:
            moment = self.moment(0, 20)
            made.append(self.memory(user, "semantic", fill(variants[0]), "preference", ["preference"], moment))
            # Paraphrased duplicates, later.
            for paraphrase in variants[1:]:
                made.append(self.memory(user, "semantic", fill(paraphrase), "preference", ["preference"],
                                        moment + timedelta(days=self.rng.randint(3, 25))))
            # An exact duplicate with different spacing and punctuation.
            if self.rng.random() < 0.4:
                made.append(self.memory(user, "semantic", fill(variants[0]).replace(".", "").upper(),
                                        "preference", ["preference"], moment + timedelta(days=2)))
        for variants in FACTS:
            moment = self.moment(0, 30)
            made.append(self.memory(user, "semantic", fill(variants[0]), "fact", ["fact", facts["project"]], moment))
            for paraphrase in variants[1:]:
                made.append(self.memory(user, "semantic", fill(paraphrase), "fact", ["fact"],
                                        moment + timedelta(days=self.rng.randint(1, 20))))
        # Contradiction: the same sentence with one differing named value.
        moment = self.moment(0, 10)
        made.append(self.memory(user, "semantic", fill("Project {project} uses {db_old} for its main database."),
                                "fact", ["database", facts["project"]], moment, 0.7))
        made.append(self.memory(user, "semantic", fill("Project {project} uses {db_new} for its main database."),
                                "fact", ["database", facts["project"]], moment + timedelta(days=12), 0.7))
        # Negation contradiction.
        made.append(self.memory(user, "semantic", fill("The user wants notifications for every {ci} build."),
                                "preference", ["notifications"], self.moment(0, 15)))
        made.append(self.memory(user, "semantic", fill("The user does not want notifications for {ci} builds."),
                                "preference", ["notifications"], self.moment(30, 45)))
        # Change over time.
        moment = self.moment(0, 15)
        made.append(self.memory(user, "semantic", fill("Using {vector_old} for vector search."),
                                "fact", ["vector-search"], moment, 0.6))
        made.append(self.memory(user, "semantic",
                                fill("Now using {vector_new} for vector search, moved from {vector_old}."),
                                "fact", ["vector-search"], moment + timedelta(days=self.rng.randint(20, 35)), 0.8))
        for template in PROCEDURES:
            made.append(self.memory(user, "procedural", fill(template), "procedure", ["runbook"],
                                    self.moment(0, 40), self.rng.uniform(0.6, 0.95)))
        for template in MISTAKES:
            made.append(self.memory(user, "episodic", fill(template), "mistake", ["mistake"],
                                    self.moment(0, 50), self.rng.uniform(0.7, 1.0)))
        # Recurring episode within one week: the pattern consolidation should find.
        week = self.rng.randint(30, 50)
        for i in range(10):
            feature = self.rng.choice(FEATURES)
            text = EPISODE_TEMPLATES[i % len(EPISODE_TEMPLATES)].format(feature=feature)
            made.append(self.memory(user, "episodic", text, "observation", ["testing", "workflow"],
                                    self.moment(week, week + 6), 0.4))
        for _ in range(25):
            text = self.rng.choice(OTHER_EPISODES).format(feature=self.rng.choice(FEATURES), **facts)
            made.append(self.memory(user, "episodic", text, "observation", ["work-log"], self.moment(), 0.3))
        for _ in range(12):
            text = self.rng.choice([
                "Current task: fix the flaky {feature} test.",
                "Waiting for review on the {feature} pull request.",
                "Scratch note: check the {feature} dashboard after lunch.",
            ]).format(feature=self.rng.choice(FEATURES))
            made.append(self.memory(user, "working", text, "observation", ["scratch"], self.moment(), 0.2))
        return made

    def history(self, user, facts):
        """What a user's history should show, made after everything else so
        the rest of the file stays as it was: a fact that changes (the newer
        supersedes the older, which nobody read since), and an early chore
        that recurs and then fades."""
        fill = lambda text: text.format(**facts)
        self.memory(user, "semantic", fill("The user lives in {city}."), "fact", ["home"],
                    START + timedelta(days=2, hours=10), 0.6)
        self.memory(user, "semantic", fill("The user moved to {new_city}."), "fact", ["home"],
                    START + timedelta(days=33, hours=10), 0.7)
        for day, template in zip([1, 3, 5, 8], CHORE_TEMPLATES):
            self.memory(user, "episodic", fill(template), "observation", ["chores"],
                        START + timedelta(days=day, hours=17), 0.1)

    def platform_changes(self):
        """What a platform sends besides creations and reads, made after
        everything else so the rest of the file stays as it was: bob edits a
        fact and deletes a secret he asked to be forgotten; frank, a user who
        came for a week, is erased (every event of his dates from before)."""
        desk, _ = self.memory("bob", "semantic", "The user's standing desk is set to 110 cm.",
                              "fact", ["desk"], START + timedelta(days=10, hours=9), 0.4)
        edited = START + timedelta(days=12, hours=9)
        self.add(edited, {"type": "memory.updated", "user_id": "bob", "memory_id": desk,
                          "updated_at": ts(edited),
                          "content": "The user's standing desk is set to 115 cm."})
        code, _ = self.memory("bob", "semantic", "The door code of the user's office is 4711.",
                              "fact", ["office"], START + timedelta(days=11, hours=9), 0.5)
        deleted = START + timedelta(days=14, hours=9)
        self.add(deleted, {"type": "memory.deleted", "user_id": "bob", "memory_id": code,
                           "deleted_at": ts(deleted)})
        frank = [self.memory("frank", "semantic", text, "fact", ["trial"],
                             START + timedelta(days=3 + day, hours=11), 0.5)
                 for day, text in enumerate(["The user is trying engram for a week.",
                                             "The user's cat is called Biscuit."])]
        for memory_id, created in frank:
            read = created + timedelta(hours=2)
            self.add(read, {"type": "memory.accessed", "user_id": "frank", "memory_id": memory_id,
                            "accessed_at": ts(read), "context": "retrieval"})
        erased = START + timedelta(days=10, hours=12)
        self.add(erased, {"type": "user.erased", "user_id": "frank", "erased_at": ts(erased)})

    def accesses(self, user, made):
        # Zipf-like popularity: a few memories are read often, most rarely.
        weights = [1.0 / (rank + 1) ** 1.1 for rank in range(len(made))]
        order = made[:]
        self.rng.shuffle(order)
        for _ in range(len(made) * 8):
            memory_id, created = self.rng.choices(order, weights)[0]
            latest = START + timedelta(days=DAYS)
            span = max(1, int((latest - created).total_seconds()))
            moment = created + timedelta(seconds=self.rng.randint(60, span))
            self.add(moment, {
                "type": "memory.accessed",
                "user_id": user,
                "memory_id": memory_id,
                "accessed_at": ts(moment),
                "context": self.rng.choice(["retrieval", "planning", "answering"]),
            })

    def requests(self, user):
        for day, execute in [(20, False), (45, False), (DAYS - 1, True)]:
            moment = START + timedelta(days=day, hours=23)
            self.add(moment, {
                "type": "consolidation.requested",
                "user_id": user,
                "requested_at": ts(moment),
                "execute": execute,
                "reason": "nightly" if execute else "preview",
            })

    def broken_lines(self):
        late = START + timedelta(days=DAYS, hours=1)
        return [
            (late, '{"type": "memory.created", "user_id": "alice", "memory_id": "m-broken"'),
            (late, json.dumps({"type": "memory.forgotten", "event_id": "x1", "user_id": "alice"})),
            (late, json.dumps({"type": "memory.created", "event_id": "x2", "user_id": "bob", "memory_id": "m1",
                               "kind": "semantic", "content": "Importance is off the scale.",
                               "created_at": ts(late), "importance": 7})),
            (late, json.dumps({"type": "memory.accessed", "event_id": "x3", "user_id": "carol",
                               "memory_id": "does-not-exist", "accessed_at": ts(late)})),
            (late, json.dumps({"type": "memory.accessed", "event_id": "x4", "user_id": "",
                               "memory_id": "m1", "accessed_at": "yesterday"})),
            (late, json.dumps({"type": "memory.created", "event_id": "x5", "user_id": "dmitri",
                               "memory_id": "m-huge", "kind": "episodic", "content": "log line " * 5000,
                               "created_at": ts(late)})),
        ]

    def run(self, out):
        for user, facts in USERS.items():
            made = self.user_memories(user, facts)
            self.accesses(user, made)
            self.requests(user)
        for user, facts in USERS.items():
            self.history(user, facts)
        self.platform_changes()
        self.events.sort(key=lambda item: (item[0], item[1]))
        for _, _, record in self.events:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        for _, line in self.broken_lines():
            out.write(line + "\n")


if __name__ == "__main__":
    Generator().run(sys.stdout)
