"""Edge: public server-rendered pages (patient assistant, hosted referral form, tracking)."""
