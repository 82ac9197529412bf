// Package einobench runs issue #30's session both ways, to compare
// refine's overhead with eino's: 5 rounds of an Engineer call then a
// Reviewer call, each call a 20 ms sleep, once as a refine session on the
// fs store and once as an eino compose graph whose checkpoint store
// writes each checkpoint to a file and fsyncs it. Overhead is a session's
// wall time ÷ the time spent inside the calls (refine's
// BenchmarkOverhead).
//
// It is a module of its own so that the refine module does not depend on
// eino (the workspace lists it: eino's requirements change no version
// refine or refine/temporal builds with); cmd/einopair runs the pairs and
// prints the ratio.
package einobench
