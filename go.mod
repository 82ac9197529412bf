module github.com/refine-spec/refine

go 1.24.4

require (
	github.com/dlclark/regexp2 v1.10.0 // indirect
	github.com/google/go-cmp v0.7.0
	github.com/google/uuid v1.6.0 // indirect
	github.com/pkoukk/tiktoken-go v0.1.6 // indirect
	github.com/tmc/langchaingo v0.1.14
	golang.org/x/sync v0.16.0
)
