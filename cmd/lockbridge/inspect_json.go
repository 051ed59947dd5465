package main

import (
	"context"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/legacy"
	"github.com/lockbridge/lockbridge/migrate"
)

// inspectJSON is `inspect --output json` (schema lockbridge.inspect/v1,
// docs/cli.md).
type inspectJSON struct {
	Schema    string           `json:"schema"`
	Name      string           `json:"name"`
	Keys      []inspectKeyJSON `json:"keys"`
	Namespace *inspectNSJSON   `json:"namespace,omitempty"`
}

type inspectKeyJSON struct {
	Codec     string        `json:"codec"`
	Key       bytesJSON     `json:"key"`
	Legacy    keyStateJSON  `json:"legacy"`
	ModernKey *bytesJSON    `json:"modern_key"`
	Modern    *keyStateJSON `json:"modern"`
}

type keyStateJSON struct {
	Type    string        `json:"type"` // "none" when absent
	Value   *bytesJSON    `json:"value"`
	PTTLms  int64         `json:"pttl_ms"` // -1 no TTL, -2 absent
	Decoded []decodedJSON `json:"decoded,omitempty"`
	Fence   *fenceJSON    `json:"fence"`
}

type decodedJSON struct {
	Codec     string  `json:"codec"`
	Parses    bool    `json:"parses"`
	Value     *int64  `json:"value,omitempty"`
	Unit      string  `json:"unit,omitempty"`
	ExpiresAt *string `json:"expires_at,omitempty"`
	Expired   *bool   `json:"expired,omitempty"`
}

type fenceJSON struct {
	Key   bytesJSON  `json:"key"`
	Value *bytesJSON `json:"value"` // null when it is not a string
}

type inspectNSJSON struct {
	Name         string  `json:"name"`
	Phase        *string `json:"phase"`
	PhaseProblem *string `json:"phase_problem"`
	Since        *string `json:"since"`
	LiveClients  int     `json:"live_clients"`
}

// inspectDoc is inspect's JSON document: each codec's keys, then the
// namespace when one is named.
func inspectDoc(ctx context.Context, e *env, cf *connFlags, c driver.Client, name string,
	keys []codecKey) (inspectJSON, error) {
	now := time.Now()
	doc := inspectJSON{Schema: "lockbridge.inspect/v1", Name: name, Keys: []inspectKeyJSON{}}
	for _, k := range keys {
		kj, err := inspectKeyDoc(ctx, c, k, now)
		if err != nil {
			return doc, err
		}
		doc.Keys = append(doc.Keys, kj)
	}
	if ns := cf.nsGiven(e); ns != "" {
		nj, err := inspectNSDoc(ctx, c, ns)
		if err != nil {
			return doc, err
		}
		doc.Namespace = nj
	}
	return doc, nil
}

// inspectKeyDoc is one codec's keys in inspect's JSON: the legacy key with
// its value under every value codec, and the modern key.
func inspectKeyDoc(ctx context.Context, c driver.Client, k codecKey, now time.Time) (inspectKeyJSON, error) {
	kj := inspectKeyJSON{Codec: k.codec.String(), Key: jsonBytes(k.key)}
	lk, err := readKey(ctx, c, k.key)
	if err != nil {
		return kj, err
	}
	if kj.Legacy, err = keyState(ctx, c, k.key, lk); err != nil {
		return kj, err
	}
	if lk.isString() {
		for _, vc := range legacy.ValueCodecs() {
			d := decodedJSON{Codec: vc.String()}
			if v, err := vc.Decode(lk.value); err == nil {
				x := decodeExpiry(v, now)
				d.Parses, d.Value, d.Unit, d.ExpiresAt, d.Expired = true, &v, x.unit, jsonTime(x.at), &x.expired
			}
			kj.Legacy.Decoded = append(kj.Legacy.Decoded, d)
		}
	}
	if k.modern == "" {
		return kj, nil
	}
	mk := jsonBytes(k.modern)
	kj.ModernKey = &mk
	mv, err := readKey(ctx, c, k.modern)
	if err != nil {
		return kj, err
	}
	st, err := keyState(ctx, c, k.modern, mv)
	if err != nil {
		return kj, err
	}
	kj.Modern = &st
	return kj, nil
}

// inspectNSDoc is the namespace ns in inspect's JSON.
func inspectNSDoc(ctx context.Context, c driver.Client, ns string) (*inspectNSJSON, error) {
	ctl, err := migrate.NewController(c, ns)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	st, err := ctl.Status(ctx)
	if err != nil {
		return nil, err
	}
	nj := &inspectNSJSON{Name: ns, Since: jsonTime(st.Since)}
	if st.PhaseProblem != nil {
		r := string(st.PhaseProblem.Reason)
		nj.PhaseProblem = &r
	} else {
		p := st.Phase.String()
		nj.Phase = &p
	}
	for _, n := range st.Live {
		nj.LiveClients += n
	}
	return nj, nil
}

// keyState is a key's state in JSON, with its fence counter.
func keyState(ctx context.Context, c driver.Client, key string, k keyInfo) (keyStateJSON, error) {
	st := keyStateJSON{Type: k.typ, PTTLms: k.pttl}
	if st.Type == "" {
		st.Type = "none"
	}
	if k.isString() {
		v := jsonBytes(k.value)
		st.Value = &v
	}
	fk, v, ok, err := readFence(ctx, c, key)
	switch {
	case err == errFenceNotString:
		st.Fence = &fenceJSON{Key: jsonBytes(fk)}
	case err != nil:
		return st, err
	case ok:
		fv := jsonBytes(v)
		st.Fence = &fenceJSON{Key: jsonBytes(fk), Value: &fv}
	}
	return st, nil
}
