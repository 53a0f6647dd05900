package prompts

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// Names of the released prompts.
const (
	NameInvestigatorFresh  = "investigator-fresh"
	NameInvestigatorUpdate = "investigator-update"
	NameValidator          = "validator"
	NameStance             = "stance"
)

// Variables the released prompts use.
const (
	VarFenceOpen   = "FenceOpen"
	VarFenceClose  = "FenceClose"
	VarCurrentDate = "CurrentDate"
)

// Tool names the prompts tell the model to call; the orchestrator's tool
// definitions must use the same names.
const (
	ToolSubmitCorrection = "submit_correction"
	ToolRetainCorrection = "retain_correction"
	ToolFetchURL         = "fetch_url"
)

// Prompt is one registered version of a prompt. SHA256 is the lowercase hex
// digest of Text, the raw template file; Text is what the audit stores.
type Prompt struct {
	Name    string
	Version string
	SHA256  string
	Text    string
}

// ID is "name@version", a compact reference for logs and events.
func (p Prompt) ID() string { return p.Name + "@" + p.Version }

// Vars are a template's variables by name.
type Vars map[string]string

// StandardVars are the variables of the released prompts: the fence lines
// (from Fence) and today's date taken from now in UTC.
func StandardVars(fenceOpen, fenceClose string, now time.Time) Vars {
	return Vars{
		VarFenceOpen:   fenceOpen,
		VarFenceClose:  fenceClose,
		VarCurrentDate: now.UTC().Format(time.DateOnly),
	}
}

// parse parses the prompt's text as a template that fails on missing keys.
func (p Prompt) parse() (*template.Template, error) {
	t, err := template.New(p.ID()).Option("missingkey=error").Parse(p.Text)
	if err != nil {
		return nil, fmt.Errorf("prompt %s: parse template: %w", p.ID(), err)
	}
	return t, nil
}

// Variables lists, sorted, the variables the template uses: exactly the
// keys Render requires.
func (p Prompt) Variables() ([]string, error) {
	t, err := p.parse()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			if err := collectFields(tt.Root, seen); err != nil {
				return nil, fmt.Errorf("prompt %s: %w", p.ID(), err)
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Render executes the template with vars and returns the exact
// instructions string. vars must hold exactly the template's variables,
// each non-empty.
func (p Prompt) Render(vars Vars) (string, error) {
	want, err := p.Variables()
	if err != nil {
		return "", err
	}
	if err := checkVars(want, vars); err != nil {
		return "", fmt.Errorf("prompt %s: %w", p.ID(), err)
	}
	t, err := p.parse()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, map[string]string(vars)); err != nil {
		return "", fmt.Errorf("prompt %s: render: %w", p.ID(), err)
	}
	return b.String(), nil
}

// checkVars compares the given variables with the template's.
func checkVars(want []string, vars Vars) error {
	var errs []error
	wanted := map[string]bool{}
	for _, name := range want {
		wanted[name] = true
		v, ok := vars[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("variable %s is missing", name))
		case strings.TrimSpace(v) == "":
			errs = append(errs, fmt.Errorf("variable %s is empty", name))
		}
	}
	extra := make([]string, 0)
	for name := range vars {
		if !wanted[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		errs = append(errs, fmt.Errorf("variable %s is not used by this template", name))
	}
	if open, ok := vars[VarFenceOpen]; ok && open == vars[VarFenceClose] {
		errs = append(errs, errors.New("FenceOpen and FenceClose must differ"))
	}
	return errors.Join(errs...)
}

// collectFields records the top-level fields ({{.Name}}) a template tree
// references. Constructs a prompt has no business using (variables, nested
// templates, chained fields) are refused so the variable list stays exact.
func collectFields(node parse.Node, seen map[string]bool) error {
	switch n := node.(type) {
	case nil:
		return nil
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := collectFields(c, seen); err != nil {
				return err
			}
		}
	case *parse.ActionNode:
		return collectFields(n.Pipe, seen)
	case *parse.PipeNode:
		if n == nil {
			return nil
		}
		if len(n.Decl) > 0 {
			return fmt.Errorf("template variables ($x) are not supported: %s", n)
		}
		for _, c := range n.Cmds {
			if err := collectFields(c, seen); err != nil {
				return err
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			if err := collectFields(a, seen); err != nil {
				return err
			}
		}
	case *parse.FieldNode:
		if len(n.Ident) != 1 {
			return fmt.Errorf("only flat variables like {{.Name}} are supported: %s", n)
		}
		seen[n.Ident[0]] = true
	case *parse.IfNode:
		return collectBranch(&n.BranchNode, seen)
	case *parse.WithNode:
		return fmt.Errorf("{{with}} changes the data and is not supported: %s", n)
	case *parse.RangeNode:
		return fmt.Errorf("{{range}} is not supported: %s", n)
	case *parse.TemplateNode:
		return fmt.Errorf("nested templates are not supported: %s", n)
	case *parse.TextNode, *parse.CommentNode, *parse.StringNode, *parse.NumberNode,
		*parse.BoolNode, *parse.IdentifierNode, *parse.DotNode, *parse.NilNode:
		return nil
	default:
		return fmt.Errorf("unsupported template construct %T: %s", node, node)
	}
	return nil
}

func collectBranch(b *parse.BranchNode, seen map[string]bool) error {
	if err := collectFields(b.Pipe, seen); err != nil {
		return err
	}
	if err := collectFields(b.List, seen); err != nil {
		return err
	}
	if b.ElseList != nil {
		return collectFields(b.ElseList, seen)
	}
	return nil
}
