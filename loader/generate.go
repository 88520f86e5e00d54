package loader

//go:generate go run ./internal/genfixtures -out ../testdata/pdf
