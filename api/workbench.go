package api

// The workbench page at /app (api/workbench): the same HTML for /app and
// every job's permalink /app/analyses/{id}, its script and stylesheet
// under /app/assets/, all under a strict content security policy; and the
// job's HTML report as a download.

import (
	"bytes"
	"io/fs"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/errata-dev/errata/api/workbench"
)

// setPageHeaders applies what every workbench document carries.
func setPageHeaders(c *fiber.Ctx, csp string) {
	c.Set("Content-Security-Policy", csp)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	c.Set("Cross-Origin-Resource-Policy", "same-origin")
	c.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
}

func (s *Server) workbenchRoutes() {
	index := workbench.Index()
	page := func(c *fiber.Ctx) error {
		setPageHeaders(c, workbench.ContentSecurityPolicy)
		c.Set(fiber.HeaderContentType, workbench.ContentType("index.html"))
		c.Set(fiber.HeaderCacheControl, "no-cache")
		return c.Status(fiber.StatusOK).Send(index)
	}
	s.app.Get("/app", page)
	s.app.Get("/app/analyses/:id", page)
	assets := workbench.Assets()
	s.app.Get("/app/assets/:name", func(c *fiber.Ctx) error {
		name := c.Params("name")
		body, err := fs.ReadFile(assets, name)
		if err != nil || name == "index.html" {
			return c.Status(fiber.StatusNotFound).SendString("not found")
		}
		setPageHeaders(c, workbench.ContentSecurityPolicy)
		c.Set(fiber.HeaderContentType, workbench.ContentType(name))
		c.Set(fiber.HeaderCacheControl, "no-cache")
		return c.Status(fiber.StatusOK).Send(body)
	})
}

// analysisReport is GET /api/v1/analyses/{id}/report: the job as a
// self-contained HTML document, downloaded as errata-analysis-{id}.html.
func (s *Server) analysisReport(c *fiber.Ctx) error {
	id, err := analysisID(c)
	if err != nil {
		return err
	}
	a, err := s.job(c.UserContext(), id)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := workbench.RenderReport(&b, workbench.Report{Analysis: a, Permalink: c.BaseURL() + "/app/analyses/" + id,
		Generated: time.Now()}); err != nil {
		return err
	}
	setPageHeaders(c, workbench.ReportContentSecurityPolicy)
	c.Set(fiber.HeaderContentType, workbench.ContentType("report.html"))
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="errata-analysis-`+id+`.html"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusOK).Send(b.Bytes())
}
