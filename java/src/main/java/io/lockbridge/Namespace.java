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
    final String ns;
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

    Namespace(String ns) {
        if (ns == null || ns.isEmpty() || ns.contains("{") || ns.contains("}")) {
            throw new InvalidException("migrate: namespace " + Keys.show(ns) + " must be non-empty and without braces");
        }
        this.ns = ns;
        String p = "lockbridge:{" + ns + "}:";
        phase = k(p + "phase");
        since = k(p + "phase-since");
        meta = k(p + "namespace");
        channel = k(p + "phase-changed");
        clients = k(p + "clients");
        expiry = k(p + "clients-expiry");
        seen = k(p + "clients-seen");
        fleet = k(p + "fleet");
        sighting = k(p + "legacy-sighting");
        pending = k(p + "init-pending");
        mark = k("lockbridge-mark:{" + ns + "}");
    }

    /** How many channels the phase notices of protocol 3 go out on (Go: noticeShards). */
    static final int NOTICE_SHARDS = 64;

    /** Notice channel i (0 ≤ i < NOTICE_SHARDS): …:phase-changed:i. */
    byte[] shard(int i) {
        return k("lockbridge:{" + ns + "}:phase-changed:" + i);
    }

    private static byte[] k(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    String remedyInit() {
        return "if the namespace is new, start it at legacy with `lockbridge phase init --namespace " + ns
                + "`; if it ran before, its state was lost: `lockbridge phase repair --namespace " + ns + " --to PHASE`";
    }

    String remedyRepair() {
        return "an operator restores it with `lockbridge phase repair --namespace " + ns + " --to PHASE` (see `lockbridge fleet --namespace "
                + ns + "` for the phase the evidence shows)";
    }
}
