package core

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/store"
)

// storeSettings records the session's settings in its state, as JSON so
// that a later refine with new fields restores the old ones and defaults
// the rest.
func storeSettings(st *state.State, set Settings) error {
	b, err := json.Marshal(set)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	st.Settings = b
	return nil
}

// RestoredSettings returns the settings the session in st was started (or
// last changed) with, over cfg's: a session from before settings were
// stored keeps cfg's.
func RestoredSettings(cfg Params, st *state.State) (Settings, error) {
	if len(st.Settings) == 0 {
		return cfg.Settings, nil
	}
	set := cfg.Settings
	if err := json.Unmarshal(st.Settings, &set); err != nil {
		return Settings{}, fmt.Errorf("%w: stored settings: %v", store.ErrCorrupt, err)
	}
	if err := set.Validate(); err != nil {
		return Settings{}, fmt.Errorf("stored settings: %w", err)
	}
	return set, nil
}

// applySettings validates, records and commits new settings; the caller
// holds the session's turn.
func (s *Engine) applySettings(set Settings) error {
	if err := set.Validate(); err != nil {
		return fmt.Errorf("set settings: %w", err)
	}
	changes := diffSettings(s.cfg.Settings, set)
	if len(changes) == 0 {
		return nil
	}
	s.cfg.Settings = set
	if err := storeSettings(s.st, s.cfg.Settings); err != nil {
		return err
	}
	s.st.SettingsLog = append(s.st.SettingsLog, state.SettingsChange{Round: s.st.Round, At: s.at().Format("2006-01-02 15:04:05"), Changes: changes})
	s.log.Info("settings changed", "changes", strings.Join(changes, "; "))
	return s.checkpoint()
}

// diffSettings lists the fields that differ, by their JSON names.
func diffSettings(old, cur Settings) []string {
	var out []string
	ov, cv := reflect.ValueOf(old), reflect.ValueOf(cur)
	t := ov.Type()
	for i := range t.NumField() {
		a, b := ov.Field(i).Interface(), cv.Field(i).Interface()
		if reflect.DeepEqual(a, b) {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, fmt.Sprintf("%s: %v → %v", name, a, b))
	}
	slices.Sort(out)
	return out
}
