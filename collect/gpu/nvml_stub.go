//go:build !nvml

package gpu

import "errors"

func openNVML() (Source, error) {
	return nil, errors.New("built without NVML: rebuild with -tags nvml (needs cgo and the NVIDIA driver), or use --gpu nvidia-smi or dcgm=URL")
}
