package io.lockbridge;

import java.nio.charset.StandardCharsets;

/**
 * A migration namespace's keys, all tagged {ns} so they share a slot:
 * lockbridge:{ns}:phase, …:phase-since, …:namespace, …:phase-changed,
 * …:clients, …:clients-expiry, …:clients-seen, …:fleet, …:legacy-sighting,
 * …:init-pending; and the namespace's mark, lockbridge-mark:{ns}, kept apart
 * from them (the Go controller writes both; lockers only name them).
 */
final class Namespace {
    final String name;
    final byte[] phase;
    final byte[] since;
    final byte[] meta;
    final byte[] channel;
    final byte[] clients;
    final byte[] expiry;
    final byte[] seen;
    final byte[] fleet;
    final byte[] sighting;
    final byte[] pending;
    final byte[] mark;

    Namespace(String name) {
        if (name == null || name.isEmpty() || name.contains("{") || name.contains("}")) {
            throw new InvalidException("migrate: namespace " + Keys.show(name)
                    + " must be non-empty and without braces");
        }
        this.name = name;
        String prefix = "lockbridge:{" + name + "}:";
        phase = utf8(prefix + "phase");
        since = utf8(prefix + "phase-since");
        meta = utf8(prefix + "namespace");
        channel = utf8(prefix + "phase-changed");
        clients = utf8(prefix + "clients");
        expiry = utf8(prefix + "clients-expiry");
        seen = utf8(prefix + "clients-seen");
        fleet = utf8(prefix + "fleet");
        sighting = utf8(prefix + "legacy-sighting");
        pending = utf8(prefix + "init-pending");
        mark = utf8("lockbridge-mark:{" + name + "}");
    }

    /** How many channels the phase notices of protocol 3 go out on (Go: noticeShards). */
    static final int NOTICE_SHARDS = 64;

    /** Notice channel i (0 ≤ i < NOTICE_SHARDS): …:phase-changed:i. */
    byte[] shard(int i) {
        return utf8("lockbridge:{" + name + "}:phase-changed:" + i);
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    String remedyInit() {
        return "if the namespace is new, start it at legacy with `lockbridge phase init --namespace " + name
                + "`; if it ran before, its state was lost: `lockbridge phase repair --namespace " + name
                + " --to PHASE`";
    }

    String remedyRepair() {
        return "an operator restores it with `lockbridge phase repair --namespace " + name
                + " --to PHASE` (see `lockbridge fleet --namespace " + name + "` for the phase the evidence shows)";
    }
}
