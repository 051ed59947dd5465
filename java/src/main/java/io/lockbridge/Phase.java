package io.lockbridge;

/**
 * A migration phase, in order. The names are the phase key's values and the
 * registry's, as in Go's migrate.Phase.
 */
public enum Phase {
    /** The legacy SETNX lock on the legacy key only. */
    LEGACY("legacy"),
    /** Both keys: the modern key and the legacy value Java readers see. */
    DUAL_WRITE("dual-write"),
    /** Both keys read, only the modern key written. */
    DUAL_READ("dual-read"),
    /** The modern lock on the modern key only. */
    MODERN("modern");

    private final String wire;

    Phase(String wire) {
        this.wire = wire;
    }

    /** The phase's name on the wire: legacy, dual-write, dual-read or modern. */
    public String wireName() {
        return wire;
    }

    @Override
    public String toString() {
        return wire;
    }

    /** The phase named name on the wire; null when it is not a phase name. */
    public static Phase ofWire(String name) {
        for (Phase phase : values()) {
            if (phase.wire.equals(name)) {
                return phase;
            }
        }
        return null;
    }

    boolean writesLegacy() {
        return this == LEGACY || this == DUAL_WRITE;
    }

    boolean writesModern() {
        return this.ordinal() >= DUAL_WRITE.ordinal();
    }

    boolean readsLegacy() {
        return this.ordinal() <= DUAL_READ.ordinal();
    }

    boolean readsModern() {
        return this.ordinal() >= DUAL_WRITE.ordinal();
    }

    /**
     * Whether locks taken in first and in second exclude each other: each phase
     * writes a key the other reads. Neighbouring phases are compatible;
     * legacy and dual-read, or anything and a phase two away, are not.
     */
    public static boolean compatible(Phase first, Phase second) {
        return overlap(first, second) && overlap(second, first);
    }

    private static boolean overlap(Phase writer, Phase reader) {
        return (writer.writesLegacy() && reader.readsLegacy()) || (writer.writesModern() && reader.readsModern());
    }
}
