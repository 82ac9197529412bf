package core

import "text/template"

// Params is what the decisions read of the host's Config: the settings and
// the prompt material, without the Store, the roles, the Asker or the
// Observer, which only the driver uses.
type Params struct {
	Settings
	// Defaults are DefaultConfig's settings: what a session from before
	// settings were stored reports.
	Defaults Settings
	// HasColdStore is set when the host configured a cold store.
	HasColdStore bool
	// EngineerTemplate and ReviewerTemplate are Config's prompt templates.
	EngineerTemplate *template.Template
	ReviewerTemplate *template.Template
	// ExcerptPrompts is Config.ExcerptPrompts.
	ExcerptPrompts bool
	// CanonicalEngineer and CanonicalReviewer are Config's Tier 1 examples.
	CanonicalEngineer string
	CanonicalReviewer string
	// Discover and MaxGaps are Config's (New only): a session created
	// with no gaps, or with Discover, starts with discovery (discover.go).
	Discover bool
	MaxGaps  int
}
