// Command schemagen writes strict, self-contained JSON schemas that kubeconform
// reads from disk, so the chart can be validated with no network access.
//
// Sources:
//   - -swagger: the Kubernetes OpenAPI v2 document (api/openapi-spec/swagger.json
//     of the k8s.io/kubernetes Go module, the same release the local control plane
//     builds). One schema is written per group/version/kind found in it.
//   - -crd: CustomResourceDefinition YAML files (this project's CRDs, and the small
//     hand-written ServiceMonitor subset in test/chart/schemas/). One schema is
//     written per served version.
//
// Layout: <out>/<group or "v1" for core>/<kind lowercased>_<version>.json, which is
// kubeconform's "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json".
//
// Each schema carries the definitions it references under "definitions" (recursive
// types such as JSONSchemaProps stay references, so nothing is expanded forever).
// "Strict" means what kubeconform's published -strict schemas mean: every object
// schema that lists properties gets additionalProperties: false unless it says
// otherwise (or is x-kubernetes-preserve-unknown-fields), so a misspelt or misplaced
// field is an error. IntOrString accepts integers and strings, Quantity strings and
// numbers, as the API server does. Formats and descriptions are dropped (formats
// such as int32 or int-or-string are not JSON Schema formats).
//
// What this cannot check, and the API server does: CEL rules
// (x-kubernetes-validations), defaulting, and admission. Those are covered by the
// in-cluster tests (helm install --dry-run=server, test/chart/*.test.ts).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

type schema = map[string]any

const (
	defPrefix  = "#/definitions/"
	objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	swaggerPath := flag.String("swagger", "", "Kubernetes OpenAPI v2 swagger.json")
	out := flag.String("out", "", "output directory")
	var crds multiFlag
	flag.Var(&crds, "crd", "CustomResourceDefinition YAML file (repeatable; multi-document files allowed)")
	flag.Parse()
	if *swaggerPath == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: schemagen -swagger swagger.json -out DIR [-crd FILE]...")
		os.Exit(2)
	}
	if err := run(*swaggerPath, *out, crds); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(swaggerPath, out string, crds []string) error {
	raw, err := os.ReadFile(swaggerPath)
	if err != nil {
		return err
	}
	var doc struct {
		Definitions map[string]schema `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", swaggerPath, err)
	}
	defs := map[string]any{}
	for name, d := range doc.Definitions {
		defs[name] = strictify(d)
	}
	// Types whose wire form is wider than their OpenAPI "type: string".
	defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = schema{"oneOf": []any{schema{"type": "string"}, schema{"type": "integer"}}}
	defs["io.k8s.apimachinery.pkg.api.resource.Quantity"] = schema{"oneOf": []any{schema{"type": "string"}, schema{"type": "number"}}}

	count := 0
	names := make([]string, 0, len(doc.Definitions))
	for n := range doc.Definitions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		gvks, _ := doc.Definitions[name]["x-kubernetes-group-version-kind"].([]any)
		if len(gvks) != 1 { // DeleteOptions and WatchEvent list every group: not objects one applies
			continue
		}
		gvk := gvks[0].(map[string]any)
		group, _ := gvk["group"].(string)
		version, _ := gvk["version"].(string)
		kind, _ := gvk["kind"].(string)
		root := schema{"$ref": defPrefix + name}
		if err := write(out, group, version, kind, root, defs); err != nil {
			return err
		}
		count++
	}

	for _, path := range crds {
		n, err := convertCRDFile(path, out, defs)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		count += n
	}
	fmt.Printf("schemagen: wrote %d schemas to %s\n", count, out)
	return nil
}

func convertCRDFile(path, out string, defs map[string]any) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	count := 0
	for _, part := range splitYAML(string(raw)) {
		var crd struct {
			Kind string `json:"kind"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
					Schema struct {
						OpenAPIV3Schema schema `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(part), &crd); err != nil {
			return count, err
		}
		if crd.Kind == "" {
			continue
		}
		if crd.Kind != "CustomResourceDefinition" {
			return count, fmt.Errorf("expected CustomResourceDefinition, found %s", crd.Kind)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			root := crdSchema(v.Schema.OpenAPIV3Schema)
			props, _ := root["properties"].(schema)
			if props == nil {
				props = schema{}
				root["properties"] = props
			}
			// The API server validates metadata as ObjectMeta whatever the CRD says.
			props["metadata"] = schema{"$ref": defPrefix + objectMeta}
			props["apiVersion"] = schema{"type": "string"}
			props["kind"] = schema{"type": "string"}
			if err := write(out, crd.Spec.Group, v.Name, crd.Spec.Names.Kind, root, defs); err != nil {
				return count, err
			}
			count++
		}
	}
	return count, nil
}

func splitYAML(s string) []string {
	var parts []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.TrimLeft(line, "-")) == "" {
			parts = append(parts, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(parts, strings.Join(cur, "\n"))
}

// strictify converts one OpenAPI v2 schema node to a strict JSON schema node.
func strictify(node schema) schema {
	outNode := schema{}
	for k, v := range node {
		switch k {
		case "description", "format", "x-kubernetes-group-version-kind", "x-kubernetes-patch-strategy",
			"x-kubernetes-patch-merge-key", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
			"x-kubernetes-map-type", "x-kubernetes-unions":
			// documentation or server-side merge hints: not validation
		case "properties":
			props := schema{}
			for pk, pv := range v.(map[string]any) {
				props[pk] = strictify(pv.(map[string]any))
			}
			outNode[k] = props
		case "items", "not":
			if m, ok := v.(map[string]any); ok {
				outNode[k] = strictify(m)
			} else {
				outNode[k] = v
			}
		case "additionalProperties":
			if m, ok := v.(map[string]any); ok {
				outNode[k] = strictify(m)
			} else {
				outNode[k] = v
			}
		case "allOf", "anyOf", "oneOf":
			var list []any
			for _, item := range v.([]any) {
				list = append(list, strictify(item.(map[string]any)))
			}
			outNode[k] = list
		default:
			outNode[k] = v
		}
	}
	// OpenAPI v3-style single-element allOf wrapping a $ref: unwrap.
	if all, ok := outNode["allOf"].([]any); ok && len(all) == 1 {
		if only, ok := all[0].(schema); ok {
			if ref, ok := only["$ref"]; ok && len(only) == 1 {
				delete(outNode, "allOf")
				outNode["$ref"] = ref
			}
		}
	}
	if _, hasProps := outNode["properties"]; hasProps {
		if _, set := outNode["additionalProperties"]; !set && outNode["x-kubernetes-preserve-unknown-fields"] != true {
			outNode["additionalProperties"] = false
		}
	}
	return outNode
}

// crdSchema converts a CRD structural schema (OpenAPI v3 subset) to a strict JSON schema node.
func crdSchema(node schema) schema {
	n := strictify(node)
	return fixCRDNode(n)
}

// fixCRDNode applies the Kubernetes extensions of structural schemas.
func fixCRDNode(n schema) schema {
	if props, ok := n["properties"].(schema); ok {
		for k, v := range props {
			props[k] = fixCRDNode(v.(schema))
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if m, ok := n[k].(schema); ok {
			n[k] = fixCRDNode(m)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := n[k].([]any); ok {
			for i, item := range list {
				list[i] = fixCRDNode(item.(schema))
			}
		}
	}
	if n["x-kubernetes-int-or-string"] == true {
		delete(n, "type")
		n["anyOf"] = []any{schema{"type": "integer"}, schema{"type": "string"}}
	}
	if n["nullable"] == true {
		if t, ok := n["type"].(string); ok {
			n["type"] = []any{t, "null"}
		}
	}
	// JSON Schema draft 4 (kubeconform's default) knows none of these; drop them to keep the output plain.
	for _, k := range []string{"nullable", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
		"x-kubernetes-embedded-resource", "x-kubernetes-validations", "default", "example"} {
		delete(n, k)
	}
	return n
}

// write stores root with the definitions it reaches.
func write(out, group, version, kind string, root schema, defs map[string]any) error {
	used := map[string]any{}
	collect(root, defs, used)
	doc := schema{}
	for k, v := range root {
		doc[k] = v
	}
	if len(used) > 0 {
		doc["definitions"] = used
	}
	dir := group
	if dir == "" {
		dir = version // kubeconform's .Group for "v1" is "v1"
	}
	path := filepath.Join(out, dir, strings.ToLower(kind)+"_"+version+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func collect(node any, defs map[string]any, used map[string]any) {
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok && strings.HasPrefix(ref, defPrefix) {
			name := strings.TrimPrefix(ref, defPrefix)
			if _, seen := used[name]; !seen {
				d, ok := defs[name]
				if !ok {
					fmt.Fprintf(os.Stderr, "schemagen: unresolved reference %s\n", ref)
					os.Exit(1)
				}
				used[name] = d
				collect(d, defs, used)
			}
		}
		for k, v := range n {
			if k == "$ref" {
				continue
			}
			collect(v, defs, used)
		}
	case []any:
		for _, v := range n {
			collect(v, defs, used)
		}
	}
}
