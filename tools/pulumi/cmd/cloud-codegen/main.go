// Command cloud-codegen writes an SDK for one language from a Pulumi package schema, with Pulumi's own code
// generators at the pinned release (github.com/pulumi/pulumi/pkg/v3/codegen/{nodejs,python,go}).
//
// `pulumi package gen-sdk` does the same by handing the bound schema to the language host plugin
// (pulumi-language-nodejs, -python, -go), whose GeneratePackage binds it again and calls these generators with
// these arguments. Those hosts live in Go modules of their own that cannot be fetched here, so this command
// makes the same calls in process: bind (dangling references allowed), marshal, bind again, generate, and
// write the files under <out>/<language>, which is emptied first.
//
// Usage: cloud-codegen --language nodejs|python|go [--out DIR] SCHEMA.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// noLoader refuses every reference: the schemas this command is for refer to no other package.
type noLoader struct{}

var errNoRefs = errors.New("cloud-codegen: the schema refers to another package; only self-contained schemas are supported")

func (noLoader) LoadPackage(string, *semver.Version) (*schema.Package, error) { return nil, errNoRefs }
func (noLoader) LoadPackageV2(context.Context, *schema.PackageDescriptor) (*schema.Package, error) {
	return nil, errNoRefs
}

func (noLoader) LoadPackageReference(string, *semver.Version) (schema.PackageReference, error) {
	return nil, errNoRefs
}

func (noLoader) LoadPackageReferenceV2(context.Context, *schema.PackageDescriptor) (schema.PackageReference, error) {
	return nil, errNoRefs
}

func bind(spec schema.PackageSpec) (*schema.Package, error) {
	pkg, diags, err := schema.BindSpec(spec, noLoader{}, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return pkg, nil
}

func run() error {
	language := flag.String("language", "", "nodejs, python or go")
	out := flag.String("out", "sdk", "the SDK is written to OUT/LANGUAGE")
	flag.Parse()
	if flag.NArg() != 1 || *language == "" {
		return errors.New("usage: cloud-codegen --language nodejs|python|go [--out DIR] SCHEMA.json")
	}

	raw, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		return err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("%s: %w", flag.Arg(0), err)
	}
	// What the CLI does before calling the language host...
	pkg, err := bind(spec)
	if err != nil {
		return err
	}
	wire, err := pkg.MarshalJSON()
	if err != nil {
		return err
	}
	// ...and what the host does with what it receives.
	var hostSpec schema.PackageSpec
	if err := json.Unmarshal(wire, &hostSpec); err != nil {
		return err
	}
	if pkg, err = bind(hostSpec); err != nil {
		return err
	}

	var files map[string][]byte
	switch *language {
	case "nodejs":
		files, err = nodejs.GeneratePackage("pulumi-language-nodejs", pkg, nil, nil, false, noLoader{})
	case "python":
		files, err = python.GeneratePackage("pulumi-language-python", pkg, nil, noLoader{})
	case "go":
		files, err = gogen.GeneratePackage("pulumi-language-go", pkg, nil)
	default:
		return fmt.Errorf("unsupported language %q (java and dotnet go through `pulumi package gen-sdk`)", *language)
	}
	if err != nil {
		return err
	}

	dir := filepath.Join(*out, *language)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "SDK has been written to %s\n", dir)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
