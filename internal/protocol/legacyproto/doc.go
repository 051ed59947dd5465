// Package legacyproto is the legacy wire protocol: how a Java service of a
// given profile names its lock key and writes, reads and judges its
// timestamp value (the key and value codecs, the unit, the +1, the cutoff
// of a takeover and the owner-window arguments of a release), and the
// option record that the legacy package's options fill. The legacy package
// locks with it; migrate builds its dual-phase scripts on it; the CLI
// decodes stored values with it.
package legacyproto
