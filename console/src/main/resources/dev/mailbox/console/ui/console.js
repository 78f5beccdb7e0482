'use strict';
// The Mailbox console: polls the active tab's JSON every 2 s while the tab is visible. Every value from the server is
// put on the page as text (textContent), never as HTML: message bodies and names are data, not markup.
(() => {
  const KEY = 'mailbox-console-token';
  const POLL_MS = 2000;
  const tabs = ['cluster', 'namespaces', 'nodes', 'leases', 'routes', 'mailboxes'];
  let tab = 'cluster';
  let after = null;       // the page of the active tab
  let timer = null;
  let failures = 0;
  const redriveTo = {};   // what the user typed per dead-letter mailbox, kept across refreshes
  const confirming = {};  // mailboxes whose purge waits for a second click
  const shown = {};       // what each section shows now: one that did not change is not drawn again

  // Whether a section's data differs from what it shows; redrawing the same rows every poll would replace
  // the buttons under the user's pointer.
  function changed(section, data) {
    const key = JSON.stringify([data, Object.keys(confirming)]);
    if (shown[section] === key) return false;
    shown[section] = key;
    return true;
  }

  const $ = (s) => document.querySelector(s);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function cell(tr, text, cls) {
    const td = el('td', text, cls);
    tr.appendChild(td);
    return td;
  }

  function headers(action) {
    const h = {};
    const t = sessionStorage.getItem(KEY);
    if (t) h['Authorization'] = 'Bearer ' + t;
    if (action) h['X-Mailbox-Console'] = '1';
    return h;
  }

  async function api(path, method) {
    const r = await fetch('api/' + path, {method: method || 'GET', headers: headers(method === 'POST'),
      cache: 'no-store', credentials: 'omit'});
    let body;
    try {
      body = await r.json();
    } catch (e) {
      body = {error: r.status + ' ' + r.statusText};
    }
    if (!r.ok) {
      const e = new Error(body.error || r.statusText);
      e.status = r.status;
      throw e;
    }
    return body;
  }

  function status(text, kind) {
    const s = $('#status');
    s.textContent = text || '';
    s.className = kind || '';
    delete s.dataset.poll; // set again by a failed poll, whose error the next good poll clears
  }

  function duration(ms) {
    if (ms === undefined || ms === null || ms < 0) return '—';
    if (ms < 1000) return ms + ' ms';
    const s = ms / 1000;
    if (s < 120) return s.toFixed(s < 10 ? 1 : 0) + ' s';
    if (s < 7200) return Math.round(s / 60) + ' min';
    return Math.round(s / 3600) + ' h';
  }

  function entries(map) {
    return Object.keys(map || {}).map((k) => k + '=' + map[k]).join(', ');
  }

  function rows(section, items, render) {
    const body = $('#' + section + ' tbody');
    body.replaceChildren();
    for (const item of items) {
      const tr = el('tr');
      render(tr, item);
      body.appendChild(tr);
    }
  }

  function paging(data) {
    const more = $('#more');
    if (data && data.next) {
      more.classList.remove('hidden');
      more.dataset.next = data.next;
    } else {
      more.classList.add('hidden');
    }
  }

  function redraw() {
    delete shown[tab];
    refresh();
  }

  const render = {
    async cluster() {
      const data = await api('cluster');
      if (!changed('cluster', data)) return;
      rows('cluster', data.coordinators, (tr, c) => {
        tr.dataset.coordinator = c.nodeId;
        cell(tr, c.nodeId);
        cell(tr, c.role, 'role role-' + c.role);
        cell(tr, c.leaderId || 'none', 'leader');
        cell(tr, c.term, 'num term');
        cell(tr, c.appliedIndex, 'num applied');
        cell(tr, c.commitIndex, 'num committed');
        cell(tr, c.fault ? c.fault : (c.role === 'UNKNOWN' ? 'unknown' : 'serving'), c.fault ? 'fault' : 'health');
        cell(tr, entries(c.members));
      });
      paging(null);
    },
    async namespaces() {
      const data = await api('namespaces' + page());
      if (!changed('namespaces', data)) return;
      rows('namespaces', data.items, (tr, n) => {
        tr.dataset.namespace = n.name;
        cell(tr, n.name);
        cell(tr, n.partition, 'num');
        cell(tr, n.owner || 'none');
        cell(tr, duration(n.ttlMs));
        cell(tr, duration(n.heartbeatMs));
        cell(tr, duration(n.graceMs));
        cell(tr, entries(n.labels));
      });
      paging(data);
    },
    async nodes() {
      const data = await api('nodes' + page());
      if (!changed('nodes', data)) return;
      rows('nodes', data.items, (tr, n) => {
        tr.dataset.node = n.id;
        cell(tr, n.id);
        cell(tr, n.address);
        cell(tr, n.up ? 'up' : 'down', n.up ? 'up' : 'down');
        cell(tr, n.region);
        cell(tr, n.version);
        cell(tr, (n.capabilities || []).join(', '));
        const td = cell(tr, '');
        const url = (n.labels || {}).console;
        if (url && /^https?:\/\/[^\s"'<>]+$/.test(url)) {
          const a = el('a', 'open');
          a.href = url;
          a.rel = 'noopener noreferrer';
          td.appendChild(a);
        }
      });
      paging(data);
    },
    async leases() {
      const data = await api('leases' + page());
      if (!changed('leases', data)) return;
      rows('leases', data.items, (tr, l) => {
        tr.dataset.lease = l.mailboxId;
        cell(tr, l.mailboxId);
        cell(tr, l.runnerId, 'holder');
        cell(tr, l.nodeId, 'node');
        cell(tr, l.epoch, 'num epoch');
        cell(tr, l.state, 'state');
        cell(tr, duration(l.timeLeftMs), 'left');
        cell(tr, duration(l.ttlMs));
      });
      paging(data);
    },
    async routes() {
      const data = await api('routes' + page());
      if (!changed('routes', data)) return;
      $('#revision').textContent = data.revision;
      rows('routes', data.items, (tr, r) => {
        tr.dataset.route = r.mailboxId;
        cell(tr, r.mailboxId);
        cell(tr, r.nodeId);
        cell(tr, r.runnerId, 'runner');
        cell(tr, r.address);
        cell(tr, r.partition, 'num');
        cell(tr, r.epoch, 'num epoch');
      });
      paging(data);
    },
    async mailboxes() {
      const data = await api('mailboxes' + page());
      if (!changed('mailboxes', data)) return;
      rows('mailboxes', data.items, (tr, m) => {
        tr.dataset.mailbox = m.id;
        cell(tr, m.id);
        const approx = m.exact === false ? '~' : '';
        cell(tr, m.queued === undefined ? '' : approx + m.queued, 'num queued');
        cell(tr, m.inFlight === undefined ? '' : approx + m.inFlight, 'num inflight');
        cell(tr, m.delayed === undefined ? '' : approx + m.delayed, 'num delayed');
        cell(tr, duration(m.oldestAgeMs), 'oldest');
        cell(tr, m.error ? m.error : (m.total === undefined ? '' : approx + m.total), m.error ? 'fault' : 'num total');
        cell(tr, m.deadLetterMailbox ? m.deadLetterMailbox + ': ' + (m.deadLetters === undefined ? '?' : m.deadLetters)
          + ' (after ' + m.maxReceiveCount + ' deliveries)' : '', 'deadletters');
        const actions = cell(tr, '', 'actions');
        if (m.canPeek) actions.appendChild(button('peek', 'Peek', () => peek(m.id)));
        const purge = button('purge' + (confirming[m.id] ? ' confirm' : ''),
          confirming[m.id] ? 'Confirm purge' : 'Purge', () => purgeClicked(m.id));
        actions.appendChild(purge);
        if (m.deadLettersOf || redriveTo[m.id] !== undefined) {
          const input = el('input', null, 'redrive-to');
          input.value = redriveTo[m.id] !== undefined ? redriveTo[m.id] : m.deadLettersOf[0];
          input.size = 14;
          input.title = 'where the messages go';
          input.addEventListener('input', () => { redriveTo[m.id] = input.value; });
          actions.appendChild(button('redrive', 'Redrive to', () => redrive(m.id, input.value)));
          actions.appendChild(input);
        }
      });
      paging(data);
    },
  };

  function button(cls, text, onClick) {
    const b = el('button', text, cls);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  function page() {
    return after ? '?after=' + encodeURIComponent(after) : '';
  }

  async function peek(id) {
    try {
      const data = await api('peek?max=20&id=' + encodeURIComponent(id));
      $('#peek-id').textContent = id;
      rows('peek', data.messages, (tr, p) => {
        tr.dataset.message = p.id;
        cell(tr, p.id);
        cell(tr, p.state, 'state');
        cell(tr, p.deliveryCount, 'num');
        cell(tr, new Date(p.enqueuedAt).toISOString());
        cell(tr, entries(p.attributes));
        const td = cell(tr, '', 'body');
        const text = p.text !== undefined ? p.text : '(binary, base64) ' + p.base64;
        td.appendChild(el('pre', text + (p.truncated ? ' … (' + p.size + ' bytes)' : '')));
      });
      $('#peek').classList.remove('hidden');
      status(data.messages.length + ' message(s) of ' + id + ', read without receiving them', 'ok');
    } catch (e) {
      status('peek refused: ' + e.message, 'error');
    }
  }

  function purgeClicked(id) {
    if (!confirming[id]) {
      confirming[id] = setTimeout(() => { delete confirming[id]; redraw(); }, 5000);
      status('click "Confirm purge" within 5 s to delete every message of ' + id, '');
      redraw();
      return;
    }
    clearTimeout(confirming[id]);
    delete confirming[id];
    api('purge?id=' + encodeURIComponent(id), 'POST')
      .then((r) => status('purged ' + r.purged + ' message(s) of ' + id, 'ok'))
      .catch((e) => status('purge refused: ' + e.message, 'error'))
      .finally(redraw);
  }

  function redrive(from, to) {
    const q = 'redrive?from=' + encodeURIComponent(from) + (to ? '&to=' + encodeURIComponent(to) : '');
    api(q, 'POST')
      .then((r) => status('redrove ' + r.moved + ' message(s) from ' + r.from + ' to ' + r.to, 'ok'))
      .catch((e) => status('redrive refused: ' + e.message, 'error'))
      .finally(redraw);
  }

  async function refresh() {
    clearTimeout(timer);
    timer = null;
    try {
      await render[tab]();
      failures = 0;
      $('#live').textContent = 'live · ' + new Date().toLocaleTimeString();
      if ($('#status').className === 'error' && $('#status').dataset.poll) status('', '');
    } catch (e) {
      failures++;
      if (e.status === 401) showSignIn();
      status(tab + ': ' + e.message, 'error');
      $('#status').dataset.poll = '1';
    }
    if (!document.hidden) {
      timer = setTimeout(refresh, failures ? Math.min(10000, POLL_MS * (failures + 1)) : POLL_MS);
    }
  }

  function show(name) {
    tab = name;
    after = null;
    delete shown[name];
    for (const t of tabs) {
      $('#' + t).classList.toggle('hidden', t !== name);
      document.querySelector('nav button[data-tab="' + t + '"]').classList.toggle('active', t === name);
    }
    status('', '');
    refresh();
  }

  function showSignIn() {
    $('#signin').classList.remove('hidden');
    $('#whoami').classList.add('hidden');
  }

  async function whoami() {
    try {
      const me = await api('whoami');
      $('#process').textContent = me.kind + ' ' + me.id;
      document.title = 'Mailbox ' + me.kind + ' ' + me.id;
      $('#principal').textContent = me.principal;
      $('#whoami').classList.toggle('hidden', !me.enforced);
      $('#signin').classList.add('hidden');
      document.querySelector('nav button[data-tab="mailboxes"]').classList.toggle('hidden', !me.mailboxes);
      const w = $('#warning');
      const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(location.hostname);
      if (!me.enforced) {
        w.textContent = 'Security is off on this ' + me.kind + ': anyone who reaches this port can read and change it.';
      } else if (!me.secure && !loopback) {
        w.textContent = 'This page is served over plain HTTP: your token crosses the network in the clear.';
      }
      w.classList.toggle('hidden', !w.textContent);
      return true;
    } catch (e) {
      if (e.status === 401) {
        showSignIn();
        status(e.message, 'error');
        return false;
      }
      status(e.message, 'error');
      return true;
    }
  }

  document.addEventListener('DOMContentLoaded', async () => {
    for (const t of tabs) {
      document.querySelector('nav button[data-tab="' + t + '"]').addEventListener('click', () => show(t));
    }
    $('#signin').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(KEY, $('#token').value.trim());
      $('#token').value = '';
      if (await whoami()) show(tab);
    });
    $('#signout').addEventListener('click', () => {
      sessionStorage.removeItem(KEY);
      location.reload();
    });
    $('#next').addEventListener('click', () => {
      after = $('#more').dataset.next;
      redraw();
    });
    $('#peek-close').addEventListener('click', () => $('#peek').classList.add('hidden'));
    document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
    if (await whoami()) show('cluster');
  });
})();
