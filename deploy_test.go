package vit_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMPIJobImagesNameARegistry checks that every image deploy/mpijob.yaml
// runs names a registry host: a bare name (vit-mpi:latest) is pulled from
// the public default registry, which does not have it, and the pods never
// start.
func TestMPIJobImagesNameARegistry(t *testing.T) {
	const path = "deploy/mpijob.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	images := regexp.MustCompile(`(?m)^\s*image:\s*(\S+)`).FindAllStringSubmatch(string(b), -1)
	if len(images) == 0 {
		t.Fatalf("%s names no image", path)
	}
	for _, m := range images {
		host, _, ok := strings.Cut(m[1], "/")
		if !ok || !strings.ContainsAny(host, ".:") && host != "localhost" {
			t.Errorf("%s: image %s names no registry host (REGISTRY.example.com/…): a cluster would pull it from the public default", path, m[1])
		}
	}
	doc, err := os.ReadFile("docs/distributed.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "docker push") {
		t.Errorf("docs/distributed.md does not say to push the image (docker push)")
	}
}
