// Package keyslot computes Redis Cluster hash slots: CRC16 (XMODEM) of the key,
// or of its hash tag when the key has one, modulo 16384, as the cluster
// specification defines it.
package keyslot
