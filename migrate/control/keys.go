package control

import "github.com/lockbridge/lockbridge/internal/protocol/migrateproto"

// NamespaceKeys returns every Redis key of namespace ns (docs/protocol.md):
// the phase, its history and the registry, for tools that clean up or
// inspect a namespace. The phase-change channel is not a key. Nor is the
// namespace's mark (MarkKey): it outlives these keys, so that a namespace
// whose keys were deleted is never taken for a new one.
func NamespaceKeys(ns string) ([]string, error) {
	k, err := migrateproto.NewKeys(ns)
	if err != nil {
		return nil, err
	}
	return k.All(), nil
}

// MarkKey returns the key of namespace ns's mark (docs/protocol.md): the
// phase the controller last set, and the highest, written with every
// phase change. It is kept apart from NamespaceKeys: when those are gone
// (a flush, an operator's cleanup), the mark still proves that the
// namespace ran and where it was, and Controller.Init restores that phase
// rather than start the namespace afresh. Delete it only to retire the
// namespace's name for good, once no lock of it is held anywhere.
func MarkKey(ns string) (string, error) {
	k, err := migrateproto.NewKeys(ns)
	if err != nil {
		return "", err
	}
	return k.Mark, nil
}

// ProtocolVersion is the version of the namespace and registry format the
// fleet's Lockers write and the controller reads (docs/protocol.md): a
// Member of another Protocol is a blocker while it lives.
const ProtocolVersion = migrateproto.Version
