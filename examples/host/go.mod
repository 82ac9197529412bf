module example.com/refinehost

go 1.26.0

require github.com/refine-spec/refine v0.0.0

require golang.org/x/sync v0.23.0 // indirect

replace github.com/refine-spec/refine => ../..
