package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A minimal W3C WebDriver client for the browser tests: chromedriver
// (Debian's chromium-driver) drives a headless Chromium.
type webDriver struct {
	t       *testing.T
	base    string
	session string
	cmd     *exec.Cmd
}

const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// webDriverClient bounds each command: a browser starved by a loaded
// machine fails the test instead of hanging it.
var webDriverClient = &http.Client{Timeout: 90 * time.Second}

// startBrowser starts chromedriver and a headless Chromium session.
func startBrowser(t *testing.T, width, height int) *webDriver {
	t.Helper()
	driver, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Fatal("chromedriver not found: make test-browser installs Debian's chromium and chromium-driver")
	}
	port := freePort(t)
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &webDriver{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	t.Cleanup(w.quit)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(w.base + "/status")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	binary := "/usr/bin/chromium"
	if _, err := os.Stat(binary); err != nil {
		binary = ""
	}
	opts := map[string]any{"args": []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		fmt.Sprintf("--window-size=%d,%d", width, height), "--force-device-scale-factor=1", "--no-first-run", "--hide-scrollbars"}}
	if binary != "" {
		opts["binary"] = binary
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	w.call("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome", "goog:chromeOptions": opts}}}, &res)
	if res.SessionID == "" {
		t.Fatal("no WebDriver session")
	}
	w.session = "/session/" + res.SessionID
	return w
}

func (w *webDriver) quit() {
	if w.session != "" {
		req, _ := http.NewRequest("DELETE", w.base+w.session, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		w.session = ""
	}
	if w.cmd != nil && w.cmd.Process != nil {
		_ = w.cmd.Process.Kill()
		_ = w.cmd.Wait()
		w.cmd = nil
	}
}

// call sends a WebDriver command and decodes its "value" into out.
func (w *webDriver) call(method, path string, body any, out any) {
	w.t.Helper()
	if err := w.try(method, path, body, out); err != nil {
		w.t.Fatal(err)
	}
}

func (w *webDriver) try(method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := webDriverClient.Do(req)
	if err != nil {
		return fmt.Errorf("webdriver %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("webdriver %s %s: %v: %s", method, path, err, b)
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("webdriver %s %s: %d %s", method, path, resp.StatusCode, env.Value)
	}
	if out != nil {
		return json.Unmarshal(env.Value, out)
	}
	return nil
}

func (w *webDriver) navigate(url string) {
	w.call("POST", w.session+"/url", map[string]any{"url": url}, nil)
}

// eval runs a script (a function body: "return ...") in the page.
func (w *webDriver) eval(script string, out any) {
	w.t.Helper()
	w.call("POST", w.session+"/execute/sync", map[string]any{"script": script, "args": []any{}}, out)
}

// find returns the element matching a CSS selector, or "".
func (w *webDriver) find(css string) string {
	var res map[string]string
	if err := w.try("POST", w.session+"/element", map[string]any{"using": "css selector", "value": css}, &res); err != nil {
		return ""
	}
	return res[elementKey]
}

func (w *webDriver) click(elem string) {
	w.call("POST", w.session+"/element/"+elem+"/click", map[string]any{}, nil)
}

// keys types text (WebDriver key codes: "\ue00d" is the space bar) into
// an element.
func (w *webDriver) keys(elem, text string) {
	w.call("POST", w.session+"/element/"+elem+"/value", map[string]any{"text": text}, nil)
}

func (w *webDriver) screenshot() []byte {
	var s string
	w.call("GET", w.session+"/screenshot", nil, &s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// waitFor evaluates script until it returns true.
func (w *webDriver) waitFor(what string, timeout time.Duration, script string) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		w.eval(script, &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			w.fail(fmt.Sprintf("%s did not happen within %s", what, timeout))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fail ends the test with a screenshot and what the page shows.
func (w *webDriver) fail(msg string) {
	w.t.Helper()
	var body string
	w.eval(`return location.href + " (" + document.readyState + ", " + document.querySelectorAll("*").length + " elements):\n" + document.body.innerText.slice(0, 2000)`, &body)
	shot := filepath.Join(os.TempDir(), "blocks-browser-failure.png")
	_ = os.WriteFile(shot, w.screenshot(), 0o644)
	w.t.Fatalf("browser: %s (screenshot: %s); the page, at %s", msg, shot, body)
}
