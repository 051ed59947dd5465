package main

import (
	"github.com/lockbridge/lockbridge/migrate"
	"github.com/lockbridge/lockbridge/migrate/control"
)

// fleetJSON is `fleet --output json` (schema lockbridge.fleet/v1,
// docs/cli.md). Times are the server's.
type fleetJSON struct {
	Schema       string             `json:"schema"`
	Namespace    string             `json:"namespace"`
	Now          *string            `json:"now"`
	Phase        *string            `json:"phase"`         // null when unknown
	PhaseProblem *string            `json:"phase_problem"` // why it is unknown
	Since        *string            `json:"since"`
	Protocol     int                `json:"protocol"`
	Evidence     *string            `json:"evidence"`
	Clients      []fleetClientJSON  `json:"clients"`
	Sighting     *fleetSightingJSON `json:"legacy_sighting"`
	Next         fleetNextJSON      `json:"next_step"`
}

type fleetClientJSON struct {
	ID         string  `json:"id"`
	Host       string  `json:"host"`
	PID        int     `json:"pid"`
	Protocol   int     `json:"protocol"`
	Phase      *string `json:"phase"`
	NextPhase  *string `json:"next_phase"`
	HeldOldest *string `json:"held_oldest"`
	HeldNewest *string `json:"held_newest"`
	Seen       *string `json:"seen"`
	Expires    *string `json:"expires"`
	Live       bool    `json:"live"`
	Invalid    *string `json:"invalid"` // why the entry does not parse
}

type fleetSightingJSON struct {
	At    *string `json:"at"`
	Key   string  `json:"key"`
	Count int64   `json:"count"`
}

type fleetNextJSON struct {
	From     *string  `json:"from"`
	To       *string  `json:"to"` // null at modern or when the phase is unknown
	Safe     bool     `json:"safe"`
	Blockers []string `json:"blockers"`
}

func phasePtr(p migrate.Phase) *string {
	if p == 0 {
		return nil
	}
	s := p.String()
	return &s
}

func fleetDoc(st control.Status) fleetJSON {
	doc := fleetJSON{
		Schema: "lockbridge.fleet/v1", Namespace: st.Namespace, Now: jsonTime(st.Now),
		Since: jsonTime(st.Since), Protocol: st.Protocol, Evidence: phasePtr(st.Evidence),
		Clients: []fleetClientJSON{},
		Next:    fleetNextJSON{Safe: st.Safe() || atModern(st), Blockers: []string{}},
	}
	if st.PhaseProblem != nil {
		r := string(st.PhaseProblem.Reason)
		doc.PhaseProblem = &r
		doc.Next.Safe = false
	} else {
		doc.Phase = phasePtr(st.Phase)
		doc.Next.From = phasePtr(st.Phase)
		if next, ok := st.Phase.Next(); ok {
			doc.Next.To = phasePtr(next)
		}
	}
	for _, b := range st.Blockers {
		doc.Next.Blockers = append(doc.Next.Blockers, b.Text)
	}
	for _, m := range st.Members {
		c := fleetClientJSON{
			ID: m.ID, Host: m.Host, PID: m.PID, Protocol: m.Protocol,
			Phase: phasePtr(m.Phase), NextPhase: phasePtr(m.Next),
			HeldOldest: phasePtr(m.HeldOldest), HeldNewest: phasePtr(m.HeldNewest),
			Seen: jsonTime(m.Seen), Expires: jsonTime(m.Expires), Live: m.Live,
		}
		if m.Invalid != nil {
			s := message(m.Invalid)
			c.Invalid = &s
		}
		doc.Clients = append(doc.Clients, c)
	}
	if !st.Sighting.At.IsZero() {
		doc.Sighting = &fleetSightingJSON{At: jsonTime(st.Sighting.At), Key: st.Sighting.Key, Count: st.Sighting.Count}
	}
	return doc
}
