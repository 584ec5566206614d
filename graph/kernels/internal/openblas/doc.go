// Package openblas binds cblas_sgemm from libopenblas through cgo for the
// kernels package's openblas build tag (Debian: apt-get install
// libopenblas-dev). Without the tag the package is empty, so default builds
// need neither cgo nor the library. It lives apart from kernels because Go
// does not allow Go assembly and cgo in one package.
package openblas
