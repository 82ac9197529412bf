package coretest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/rollback"
)

// withSettings returns set with the command's SETTING=VALUE arguments
// applied: each key is a JSON key of core.Settings; a value is read as
// JSON (3, true, 0.5), a Go duration (2s, 720h) or else a string
// (AUTO_RETRY). The arguments named in skip are the command's own. The
// result is not validated: the decisions check what they are given.
func withSettings(set core.Settings, td *datadriven.TestData, skip ...string) (core.Settings, error) {
	raw, err := json.Marshal(set)
	if err != nil {
		return set, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return set, err
	}
	changed := false
	for _, arg := range td.CmdArgs {
		if slices.Contains(skip, arg.Key) {
			continue
		}
		if _, ok := fields[arg.Key]; !ok && !knownOptional(arg.Key) {
			return set, fmt.Errorf("%s is not a setting (a JSON key of core.Settings)", arg.Key)
		}
		val := ""
		if len(arg.Vals) > 0 {
			val = arg.Vals[0]
		}
		fields[arg.Key] = settingValue(val)
		changed = true
	}
	if !changed {
		return set, nil
	}
	if raw, err = json.Marshal(fields); err != nil {
		return set, err
	}
	var out core.Settings
	if err := json.Unmarshal(raw, &out); err != nil {
		return set, err
	}
	return out, nil
}

// knownOptional are the settings marshalled only when set (omitempty).
func knownOptional(key string) bool {
	return key == "max_tokens_cap" || key == "cold_storage" || key == "backend"
}

// settingValue reads a setting's value: JSON, a duration, or a string.
func settingValue(v string) json.RawMessage {
	if v == "" {
		return json.RawMessage("true")
	}
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	if d, err := time.ParseDuration(v); err == nil {
		return json.RawMessage(strconv.FormatInt(int64(d), 10))
	}
	b, _ := json.Marshal(v)
	return b
}

// rollbackTrigger reads trigger=user|validation|divergence (or the
// Trigger's own name).
func rollbackTrigger(s string) rollback.Trigger {
	switch strings.ToLower(s) {
	case "user":
		return rollback.TriggerUser
	case "validation":
		return rollback.TriggerValidation
	case "divergence":
		return rollback.TriggerDivergence
	}
	return rollback.Trigger(s)
}
