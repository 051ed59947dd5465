package io.lockbridge;

/**
 * A registry entry of protocol 3, written exactly as Go's migrate writes it
 * (encoding/json of its entry struct: the fields in this order, no spaces,
 * next and the held fields left out when empty; v and seq first, the prefix
 * heartbeat.lua checks). seq grows with every heartbeat of the client, so
 * heartbeat.lua writes nothing over an entry with a seq at or above it: a
 * heartbeat held up in the network that lands after a newer one changes
 * nothing. The entry carries no time: liveness is the server's, in the
 * registry's sorted sets.
 */
final class Entry {
    static final int PROTOCOL = 3;

    final String id;
    final Phase phase;
    final Phase next; // null: not moving
    final String host;
    final long pid;
    final long nsInit;
    final long gen;
    final long seq; // the heartbeat's sequence number, 1 to 2^53-1
    final Phase heldOldest; // null: holds nothing
    final Phase heldNewest;
    final long heldMs; // -1 with no held lock

    Entry(String id, Phase phase, Phase next, String host, long pid, long nsInit, long gen, long seq, Phase heldOldest,
            Phase heldNewest, long heldMs) {
        this.id = id;
        this.phase = phase;
        this.next = next;
        this.host = host;
        this.pid = pid;
        this.nsInit = nsInit;
        this.gen = gen;
        this.seq = seq;
        this.heldOldest = heldOldest;
        this.heldNewest = heldNewest;
        this.heldMs = heldMs;
    }

    /** This entry with another seq. */
    Entry withSeq(long newSeq) {
        return new Entry(id, phase, next, host, pid, nsInit, gen, newSeq, heldOldest, heldNewest, heldMs);
    }

    /**
     * Whether other says the same but for seq and held_ms (Go: entry.same): a
     * heartbeat then only touches the stored entry. held_ms is for people;
     * the hold the touch renews covers the held locks.
     */
    boolean same(Entry other) {
        return other != null && id.equals(other.id) && phase == other.phase && next == other.next
                && host.equals(other.host) && pid == other.pid && nsInit == other.nsInit
                && gen == other.gen && heldOldest == other.heldOldest && heldNewest == other.heldNewest;
    }

    String json() {
        StringBuilder out = new StringBuilder(160);
        out.append("{\"v\":").append(PROTOCOL);
        out.append(",\"seq\":").append(seq);
        out.append(",\"id\":").append(Json.quote(id));
        out.append(",\"phase\":").append(Json.quote(phase.wireName()));
        if (next != null) {
            out.append(",\"next\":").append(Json.quote(next.wireName()));
        }
        out.append(",\"host\":").append(Json.quote(host));
        out.append(",\"pid\":").append(pid);
        out.append(",\"ns_init\":").append(nsInit);
        out.append(",\"gen\":").append(gen);
        if (heldOldest != null) {
            out.append(",\"held_oldest\":").append(Json.quote(heldOldest.wireName()));
            out.append(",\"held_newest\":").append(Json.quote(heldNewest.wireName()));
            out.append(",\"held_ms\":").append(Math.max(0, heldMs));
        }
        return out.append('}').toString();
    }
}
