// The JSON API, called with the token from sessionStorage. Only relative URLs: the page talks
// to the server that served it and to nothing else.

const TOKEN_KEY = "rankscope.token";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function savedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

export class Api {
  constructor(token, onUnauthorized) {
    this.token = token;
    this.onUnauthorized = onUnauthorized;
  }

  // POST a JSON body; resolves to the envelope's data.
  async post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { Authorization: `Bearer ${this.token}`, Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
    });
    return this.unwrap(response);
  }

  // GET path?params; resolves to the envelope's data, or throws an ApiError.
  async get(path, params = {}, { signal } = {}) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined && value !== "") query.set(key, value);
    }
    const url = query.toString() ? `${path}?${query}` : path;
    const response = await fetch(url, {
      headers: { Authorization: `Bearer ${this.token}`, Accept: "application/json" },
      signal,
      credentials: "omit",
      cache: "no-store",
    });
    return this.unwrap(response);
  }

  async unwrap(response) {
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok || !body || body.success !== true) {
      const error = body && body.error ? body.error : {};
      const message = error.message || `${response.status} ${response.statusText}`;
      if (response.status === 401 && this.onUnauthorized) this.onUnauthorized(message);
      throw new ApiError(response.status, error.code || "http_error", message);
    }
    return body.data;
  }
}
