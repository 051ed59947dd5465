// Package keyslot computes Redis Cluster hash slots: CRC16 (XMODEM) of the key,
// or of its hash tag when the key has one, modulo 16384, as the cluster
// specification defines it. It is below everything that routes by slot: the
// adapters (grouping sharded channels by node), the release notices and the
// lock packages (naming a companion key on its lock's slot).
package keyslot
