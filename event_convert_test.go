package refine

import (
	"reflect"
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/core"
)

// The decisions' event (core.Event) is the public Event without its
// Context, and publicEvent copies every field: a field added to one and
// not the other, or not copied, fails here instead of vanishing from
// what Observers see.
func TestPublicEventCopiesEveryDecisionField(t *testing.T) {
	pub, dec := reflect.TypeFor[Event](), reflect.TypeFor[core.Event]()
	for i := range pub.NumField() {
		f := pub.Field(i)
		if f.Name == "Context" {
			continue
		}
		g, ok := dec.FieldByName(f.Name)
		if !ok || g.Type != f.Type {
			t.Errorf("Event.%s (%s) has no field of that type in core.Event", f.Name, f.Type)
		}
	}
	if dec.NumField() != pub.NumField()-1 {
		t.Errorf("core.Event has %d fields, Event %d: want Event's fields but Context", dec.NumField(), pub.NumField())
	}
	// Every field set to a value that is not its zero value must come
	// through the copy.
	var in core.Event
	v := reflect.ValueOf(&in).Elem()
	for i := range v.NumField() {
		setNonZero(t, v.Field(i), dec.Field(i).Name)
	}
	out := reflect.ValueOf(publicEvent(in))
	for i := range v.NumField() {
		name := dec.Field(i).Name
		if got := out.FieldByName(name); !reflect.DeepEqual(got.Interface(), v.Field(i).Interface()) {
			t.Errorf("publicEvent drops %s: got %v, want %v", name, got.Interface(), v.Field(i).Interface())
		}
	}
}

// setNonZero sets f to a value other than its zero value.
func setNonZero(t *testing.T, f reflect.Value, name string) {
	t.Helper()
	switch f.Kind() {
	case reflect.String:
		f.SetString("x")
	case reflect.Int, reflect.Int64:
		f.SetInt(7)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Pointer, reflect.Struct, reflect.Interface:
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
			return
		}
		if f.Kind() == reflect.Interface {
			f.Set(reflect.ValueOf(ErrFinished)) // the one interface field: Err
			return
		}
		// A struct (time.Time, Usage): set its first settable field.
		for i := range f.NumField() {
			if f.Field(i).CanSet() {
				setNonZero(t, f.Field(i), name+"."+f.Type().Field(i).Name)
				return
			}
		}
		// time.Time has no settable fields: give it a real time.
		f.Set(reflect.ValueOf(time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)))
	default:
		t.Fatalf("field %s: kind %s not handled; extend setNonZero", name, f.Kind())
	}
}
