//go:build !amd64 || purego

package kernels

func fp32PeakLoop() peakLoop { return peakLoop{} }

func int8PeakLoop() peakLoop { return peakLoop{} }

func int8SaturatingPeakLoop() peakLoop { return peakLoop{} }
